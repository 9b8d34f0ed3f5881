package crawl

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/internal/corpustest"
	"golang.org/x/net/html"
)

func TestExtractLinks(t *testing.T) {
	page, _ := url.Parse("http://example.org/dir/page/")
	tests := []struct {
		name, html string
		want       []string
	}{
		{"quotes and bare values", `<a href="/a">x</a><A HREF='b.html'>y</A><a class=x href=c/>z</a>`,
			[]string{"http://example.org/a/", "http://example.org/dir/page/b.html", "http://example.org/dir/page/c/"}},
		{"area and entities", `<map><area href="/m?x=1&amp;y=2"></map>`, []string{"http://example.org/m/?x=1&y=2"}},
		{"comments, scripts and styles are not links", `<!-- <a href="/c"> --><script>var s = '<a href="/s">';</script><style>a[href="/t"]{}</style><a href="/real">r</a>`,
			[]string{"http://example.org/real/"}},
		{"script end tag case", `<SCRIPT>x="<a href='/s'>"</Script ><a href="/after">`, []string{"http://example.org/after/"}},
		{"base href", `<base href="http://example.org/other/"><a href="x">x</a>`, []string{"http://example.org/other/x/"}},
		{"other hosts, schemes and duplicates dropped", `<a href="http://else.org/">e</a><a href="mailto:a@b">m</a><a href="/d#1">1</a><a href="/d/#2">2</a><a>no href</a>`,
			[]string{"http://example.org/d/"}},
		{"first href wins", `<a href="/one" href="/two">`, []string{"http://example.org/one/"}},
		{"unterminated tag", `<a href="/x`, nil},
		{"spaces around equals", `<a href = "/sp">`, []string{"http://example.org/sp/"}},
		{"absolute links on the host count as relative ones do", `<a href="http://example.org/abs">a</a><a href="HTTP://Example.ORG:80/dir/page/x.html">b</a><a href="//example.org/proto/">c</a>`,
			[]string{"http://example.org/abs/", "http://example.org/dir/page/x.html", "http://example.org/proto/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := extractLinks([]byte(tt.html), page, "example.org", nil)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tokenizerLinks([]byte(tt.html), page, "example.org"), got); diff != "" {
				t.Errorf("differs from the tokenizer (-tokenizer +scanner):\n%s", diff)
			}
		})
	}
}

// TestExtractLinksMatchesTokenizer checks the fast scanner against
// golang.org/x/net/html's tokenizer on every page of the corpus.
func TestExtractLinksMatchesTokenizer(t *testing.T) {
	dir := corpustest.Dir(t)
	page, _ := url.Parse(berkeleyBase + "2016-17/x/")
	cache := &linkCache{} // shared by all pages, as ReadMirror shares it
	n := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		if diff := cmp.Diff(tokenizerLinks(body, page, "guide.berkeley.edu"), extractLinks(body, page, "guide.berkeley.edu", cache)); diff != "" {
			t.Errorf("%s (-tokenizer +scanner):\n%s", p, diff)
		}
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("walked %d pages: %v", n, err)
	}
}

func FuzzExtractLinks(f *testing.F) {
	for _, s := range []string{`<a href="/a">`, `<!-- x --><a href=b>`, `<script></script><area href='c'>`, `<base href="/d/"><a href="e">`, `<a href="&amp;">`} {
		f.Add(s)
	}
	page, _ := url.Parse("http://example.org/p/")
	f.Fuzz(func(t *testing.T, doc string) {
		links := extractLinks([]byte(doc), page, "example.org", nil)
		seen := map[string]bool{}
		for _, l := range links {
			if seen[l] || !strings.HasPrefix(l, "http://example.org/") && !strings.HasPrefix(l, "https://example.org/") {
				t.Fatalf("bad or duplicate link %q", l)
			}
			seen[l] = true
		}
	})
}

// tokenizerLinks is the reference implementation of extractLinks on
// golang.org/x/net/html's tokenizer.
func tokenizerLinks(body []byte, page *url.URL, host string) []string {
	z := html.NewTokenizer(bytes.NewReader(body))
	base := page
	seen := make(map[string]struct{})
	var out []string
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return out
		case html.StartTagToken, html.SelfClosingTagToken:
		default:
			continue
		}
		name, hasAttr := z.TagName()
		if !hasAttr {
			continue
		}
		isBase := string(name) == "base"
		if !isBase && string(name) != "a" && string(name) != "area" {
			continue
		}
		var href string
		found := false
		for {
			key, val, more := z.TagAttr()
			if string(key) == "href" {
				href, found = string(val), true
				break
			}
			if !more {
				break
			}
		}
		if !found {
			continue
		}
		if isBase {
			if b, err := page.Parse(strings.TrimSpace(href)); err == nil {
				base = b
			}
			continue
		}
		c, ok := Canonical(base, href)
		if !ok {
			continue
		}
		if hostOf(c) != host {
			continue
		}
		if _, dup := seen[c]; dup {
			continue
		}
		seen[c] = struct{}{}
		out = append(out, c)
	}
}

func TestLinkCacheMatchesCanonical(t *testing.T) {
	cache := &linkCache{}
	for _, base := range []string{"http://example.org/a/b", "https://example.org/c/", "http://other.org:8080/x", "http://u@example.org/"} {
		b, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		for _, href := range []string{"/search/?P=ECON%201", "/a/../b/", " /x?b=2&a=1 ", "//cdn.example.org/y", "rel/z", "/", "/%zz", "#frag", "HTTP://Example.ORG/a/./b?x=1#f", "https://other.org", "http://"} {
			for range 2 { // a miss, then a hit
				gotURL, gotOK := cache.canonical(b, href)
				wantURL, wantOK := Canonical(b, href)
				if gotURL != wantURL || gotOK != wantOK {
					t.Errorf("canonical(%s, %q) = %q, %v; Canonical gives %q, %v", base, href, gotURL, gotOK, wantURL, wantOK)
				}
			}
		}
	}
}

func TestLinks(t *testing.T) {
	body := []byte(`<p><a href="/a/">A</a> <a href="https://WWW.example.org/b/index.html#x">B</a>
		<a href="https://other.example/">off</a> <a href="mailto:x@example.org">m</a> <a href="c">C</a></p>`)
	got := Links(body, "https://www.example.org/dir/page/")
	want := []string{"https://www.example.org/a/", "https://www.example.org/b/", "https://www.example.org/dir/page/c/"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Links (-want +got):\n%s", diff)
	}
	if got := Links(body, "mailto:x@example.org"); got != nil {
		t.Errorf("Links of a non-http page = %v, want nil", got)
	}
}
