package clean

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
)

// convertBody converts the body of page to markdown as Cleaner.HTML does, pruning whitespace first or not.
func convertBody(t *testing.T, page string, prune bool) (md string, nodes int) {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var body *html.Node
	var find func(n *html.Node)
	find = func(n *html.Node) {
		for c := n.FirstChild; c != nil && body == nil; c = c.NextSibling {
			if c.Type == html.ElementNode && c.Data == "body" {
				body = c
			}
			find(c)
		}
	}
	find(doc)
	flattenCells(body)
	if prune {
		pruneSpace(body)
	}
	var count func(n *html.Node) int
	count = func(n *html.Node) int {
		k := 1
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			k += count(c)
		}
		return k
	}
	nodes = count(body)
	out, err := convertNode(newConverter(), body, "http://example.edu/a/")
	if err != nil {
		t.Skipf("the converter fails on %q: %v", page, err)
	}
	return tidy(string(out)), nodes
}

func TestPruneSpace(t *testing.T) {
	for _, tt := range []struct {
		name, page string
		pruned     bool // whether some node must go
	}{
		{"between paragraphs", "<div>\n  <p>One</p>\n  <p>Two <b>bold</b></p>\n</div>", true},
		{"between inline elements", "<p><b>One</b> <i>two</i></p>", false},
		{"before inline text", "<div><p>One</p> <span>two</span></div>", false},
		{"after code", "<div><code>x</code> <p>y</p></div>", true},
		{"inside pre", "<pre>\n  <b>x</b>\n  <i>y</i>\n</pre>", false},
		{"table rows", "<table>\n<tr>\n<td>a</td>\n<td>b</td>\n</tr>\n<tr><td>c</td><td>d</td></tr>\n</table>", true},
		{"list items", "<ul>\n <li>a</li>\n <li><p>b</p>\n </li>\n</ul>\n<ol>\n<li>c</li></ol>", true},
		{"heading spans", "<h3><span>EA</span> <span>200</span>\n</h3>\n<p>x</p>", true},
		{"br", "<p>a<br>\n<br>\n b</p>", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want, before := convertBody(t, tt.page, false)
			got, after := convertBody(t, tt.page, true)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("markdown changed by pruning (-want +got):\n%s", diff)
			}
			if pruned := after < before; pruned != tt.pruned {
				t.Errorf("pruned = %v (%d -> %d nodes), want %v", pruned, before, after, tt.pruned)
			}
		})
	}
}

func FuzzPruneSpace(f *testing.F) {
	for _, s := range []string{
		"<div>\n  <p>One</p>\n  <p>Two <b>bold</b></p>\n</div> tail",
		"<div><p>One</p> <span> two</span></div>",
		"<ul>\n <li>a</li>\n <li><p>b</p>\n </li>\n</ul>\n<ol>\n<li>c</li></ol>",
		"<table>\n<tr>\n<td>a <br> x</td>\n<td>b</td>\n</tr>\n</table> <p>z</p>",
		"<code>x</code> <div> <img> y</div> <pre> a </pre> <h2> h </h2>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, page string) {
		want, _ := convertBody(t, page, false)
		got, _ := convertBody(t, page, true)
		if want != got {
			t.Errorf("pruning changed the markdown of %q:\n%s", page, cmp.Diff(want, got))
		}
	})
}
