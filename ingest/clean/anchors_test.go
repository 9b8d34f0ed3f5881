package clean

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/index"
)

func TestAnchors(t *testing.T) {
	for _, tt := range []struct {
		name, html string
		want       []index.Anchor
	}{
		{"an id on the heading (asciidoc, Hugo, Python-Markdown's toc)",
			`<main><h1>git-stash(1)</h1><h2 id="_synopsis">SYNOPSIS</h2><p>git stash list</p></main>`,
			[]index.Anchor{{Heading: "SYNOPSIS", ID: "_synopsis"}}},
		{"an id on the section the heading opens, and its permalink removed (Sphinx)",
			`<main><section id="basic-use"><h2>Basic use<a class="headerlink" href="#basic-use">¶</a></h2><p>Importing.</p></section></main>`,
			[]index.Anchor{{Heading: "Basic use", ID: "basic-use"}}},
		{"an id on a section whose title page nests the heading (the DocBook XSL stylesheets)",
			`<main><div class="sect2" id="DATATYPE-INT"><div class="titlepage"><div><div><h3 class="title">8.1.1. Integer Types</h3></div></div></div><p>Whole numbers.</p></div></main>`,
			[]index.Anchor{{Heading: "8.1.1. Integer Types", ID: "DATATYPE-INT"}}},
		{"an <a id> inside the heading (Publican), whose code stays as the markdown writes it",
			`<main><h2 class="title"><a id="sect.apt-file"></a>6.4. The <code>apt-file</code> Command</h2><p>Find files.</p></main>`,
			[]index.Anchor{{Heading: "6.4. The `apt-file` Command", ID: "sect.apt-file"}}},
		{"an empty named anchor just before the heading (CourseLeaf)",
			`<main><a name="requirements"></a> <h2>Requirements</h2><p>Four courses.</p></main>`,
			[]index.Anchor{{Heading: "Requirements", ID: "requirements"}}},
		{"a heading that opens nothing and has no id: no anchor; text before a heading: the section is not its",
			`<main><div id="intro">Welcome. <h2>Fees</h2></div><h2>Dates</h2><p>In May.</p></main>`,
			nil},
		{"one heading text under two ids: neither is told by it",
			`<main><h3 id="n1">Note</h3><p>One.</p><h3 id="n2">Note</h3><p>Two.</p><h3 id="ex">Examples</h3><p>Three.</p></main>`,
			[]index.Anchor{{Heading: "Examples", ID: "ex"}}},
		{"an id that is no name (spaces) is left",
			`<main><h2 id="a b">Costs</h2><p>Eighty dollars.</p></main>`,
			nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := HTML([]byte(tt.html), "https://example.org/page.html", Config{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, d.Anchors); diff != "" {
				t.Errorf("anchors (-want +got):\n%s\nmarkdown:\n%s", diff, d.Markdown)
			}
			if strings.ContainsAny(d.Markdown, anchorOpen+anchorClose) {
				t.Errorf("markdown keeps the marks: %q", d.Markdown)
			}
		})
	}
}

// TestAnchorsLeaveMarkdown checks that the page's markdown is what it is without anchors: the marks are taken
// off every line, also where a heading ends up in a table cell, and a heading without text stays out.
func TestAnchorsLeaveMarkdown(t *testing.T) {
	page := `<main><h1 id="policy"> </h1><h2 id="fees">Fees</h2><p>Eighty dollars.</p><table><tr><th>A</th></tr><tr><td><h4 id="x">Cell</h4></td></tr></table></main>`
	plain := strings.NewReplacer(` id="policy"`, "", ` id="fees"`, "", ` id="x"`, "").Replace(page)
	with, err := HTML([]byte(page), "https://example.org/", Config{})
	if err != nil {
		t.Fatal(err)
	}
	without, err := HTML([]byte(plain), "https://example.org/", Config{})
	if err != nil {
		t.Fatal(err)
	}
	if with.Markdown != without.Markdown {
		t.Errorf("markdown with anchors:\n%q\nwithout:\n%q", with.Markdown, without.Markdown)
	}
}
