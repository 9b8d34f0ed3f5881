package clean

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
)

func TestHTML(t *testing.T) {
	const page = "https://www.example.edu/en/study/page/"
	tests := []struct {
		name string
		html string
		cfg  Config
		want Doc
	}{
		{
			name: "chrome removed, main kept, links absolute",
			html: `<html><head><title>Admissions | Example University</title><style>p{}</style></head><body>
<header><a href="/">Home</a></header><nav class="primary"><ul><li><a href="/en/">Menu item</a></li></ul></nav>
<div class="breadcrumbs"><a href="/">Home</a> › Study</div>
<main><h1>Admissions</h1><!-- note --><p>Apply <a href="../apply/">online</a> or <a href="https://other.org/x">elsewhere</a>.</p>
<script>alert("x")</script><div class="cookie-banner">We use cookies</div>
<ul><li>First</li><li>Second</li></ul></main>
<aside>Related news</aside><footer>© Example</footer></body></html>`,
			want: Doc{Title: "Admissions", Markdown: "# Admissions\n\nApply [online](https://www.example.edu/en/study/apply/) or [elsewhere](https://other.org/x).\n\n- First\n- Second\n"},
		},
		{
			name: "table kept as a markdown table, br in cells flattened",
			html: `<main><h2>Fees</h2><table><thead><tr><th>Item</th><th>Cost</th></tr></thead>
<tbody><tr><td>Tuition<br/>and <b>fees|levies</b></td><td>$13,510</td></tr><tr><td>Housing</td><td>$4,364</td></tr></tbody></table></main>`,
			want: Doc{Markdown: "## Fees\n\n| Item | Cost |\n|---|---|\n| Tuition and **fees\\|levies** | $13,510 |\n| Housing | $4,364 |\n"},
		},
		{
			name: "a cell's paragraphs run on in a table quoted in a block quote too (Python's format types)",
			html: `<main><blockquote><table><tr><th>Type</th><th>Meaning</th></tr><tr><td>g</td><td><p>General format.</p><p>Six digits.</p></td></tr></table></blockquote></main>`,
			want: Doc{Markdown: "> | Type | Meaning |\n> |---|---|\n> | g | General format.    Six digits. |\n"},
		},
		{
			name: "tab panels get their tab's name",
			html: `<title>Program &lt; University</title><main><div id="overviewcontainer" role="tabpanel"><p>Intro text.</p></div>
<div id="reqcontainer" role="tabpanel"><h2>Major Requirements</h2><p>42 units.</p></div>
<div id="emptycontainer" role="tabpanel"> </div></main>
<aside><ul role="tablist"><li role="tab" aria-controls="overviewcontainer"><a href="#overviewcontainer">Overview</a></li>
<li role="tab" aria-controls="reqcontainer"><a href="#reqcontainer">Major Requirements</a></li>
<li role="tab" aria-controls="emptycontainer"><a href="#emptycontainer">Empty</a></li></ul></aside>`,
			want: Doc{Title: "Program", Markdown: "## Overview\n\nIntro text.\n\n## Major Requirements\n\n42 units.\n"},
		},
		{
			name: "anchors that link nowhere are their text; XHTML's <a id/> does not swallow the section (DocBook)",
			html: `<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml"><body><main>
<h2 class="title"><a id="_files"/>2.5. Files</h2><p>Packages are kept in <code>/var/cache</code>.</p><p>Clean them with <a href="/clean">apt clean</a>.</p>
<table><tr><th>Name</th><th>Use</th></tr><tr><td><a name="x">dpkg</a></td><td>installs</td></tr></table></main></body></html>`,
			want: Doc{Markdown: "## 2.5. Files\n\nPackages are kept in `/var/cache`.\n\nClean them with [apt clean](https://www.example.edu/clean).\n\n| Name | Use |\n|---|---|\n| dpkg | installs |\n"},
		},
		{
			name: "links resolve against the page's <base href>",
			html: `<html><head><base href="../../../"><link rel="alternate" hreflang="de" href="de/study/page/"></head><body><main>
<p>See <a href="en/apply/">how to apply</a> and <a href="#fees">the fees</a>.</p></main></body></html>`,
			want: Doc{Markdown: "See [how to apply](https://www.example.edu/en/apply/) and [the fees](https://www.example.edu/#fees).\n",
				Alternates: []Alternate{{Lang: "de", URL: "https://www.example.edu/de/study/page/"}}},
		},
		{
			name: "the title and NAME line just before the content are kept, the NAME line's purpose joins the title (AsciiDoc's manual pages)",
			html: `<html><head><title>git-commit(1)</title></head><body><div id="header"><h1>git-commit(1) Manual Page</h1>
<h2>NAME</h2><div class="sectionbody"><p>git-commit - Record changes to the repository</p></div></div>
<div id="content"><h2>SYNOPSIS</h2><p>Create a new commit.</p></div><div id="footer">Last updated</div></body></html>`,
			want: Doc{Title: "git-commit(1): Record changes to the repository", Markdown: "# git-commit(1) Manual Page\n\n## NAME\n\ngit-commit - Record changes to the repository\n\n## SYNOPSIS\n\nCreate a new commit.\n"},
		},
		{
			name: "a site banner before the content is not its title",
			html: `<html><head><title>Fees - Example</title></head><body><div class="banner"><h1><a href="/">Example University</a></h1></div>
<div id="content"><h2>Fees</h2><p>Fees are due in August.</p></div></body></html>`,
			want: Doc{Title: "Fees", Markdown: "## Fees\n\nFees are due in August.\n"},
		},
		{
			name: "a heading alone before the content is a banner's as often as a page's",
			html: `<html><head><title>Fees - Example</title></head><body><div id="header"><h1>Example University</h1></div>
<div id="content"><h2>Fees</h2><p>Fees are due in August.</p></div></body></html>`,
			want: Doc{Title: "Fees", Markdown: "## Fees\n\nFees are due in August.\n"},
		},
		{
			name: "a pager is chrome, a sentence linking the next chapter is not (Texinfo)",
			html: `<main><div class="header"><p>Next: <a href="#Intro" rel="next">Introduction</a>, Previous: <a href="dir.html" rel="prev">(dir)</a>, Up: <a href="dir.html" rel="up">(dir)</a> [<a href="#SEC_Contents" rel="contents">Contents</a>]</p></div>
<h2>Bash Features</h2><p>Bash is the GNU shell. The <a href="#Intro" rel="next">next chapter</a> introduces it, and <a href="#Defs" rel="next">definitions</a> follow.</p></main>`,
			want: Doc{Markdown: "## Bash Features\n\nBash is the GNU shell. The [next chapter](https://www.example.edu/en/study/page/#Intro) introduces it, and [definitions](https://www.example.edu/en/study/page/#Defs) follow.\n"},
		},
		{
			name: "DocBook's navigation tables are chrome outside its navheader too (Valgrind's manual)",
			html: `<html><head><title>4. Memcheck</title></head><body><div><table class="nav" summary="Navigation header"><tr>
<td><a accesskey="p" href="core.html"><img src="prev.png" alt="Prev"></a></td><th>Valgrind User Manual</th>
<td><a accesskey="n" href="cg.html"><img src="next.png" alt="Next"></a></td></tr></table></div>
<div class="chapter"><h1>4. Memcheck</h1><p>Memcheck detects memory errors.</p></div>
<div><table class="nav" summary="Navigation footer"><tr><td><a accesskey="p" href="core.html">&lt;&lt; 3. Core</a></td>
<td><a accesskey="u" href="manual.html">Up</a></td></tr></table></div></body></html>`,
			want: Doc{Title: "4. Memcheck", Markdown: "# 4. Memcheck\n\nMemcheck detects memory errors.\n"},
		},
		{
			name: "Doxygen: its content block, its title as the page's heading, not the project banner",
			html: `<html><head><title>Doxygen: Frequently Asked Questions</title></head><body><div id="top"><div id="titlearea"><table><tr><td><div id="projectname">Doxygen</div></td></tr></table></div></div>
<div id="doc-content"><div class="header"><div class="headertitle"><div class="title">Frequently Asked Questions</div></div></div>
<div class="contents"><p>Use the mainpage command.</p></div></div></body></html>`,
			want: Doc{Title: "Doxygen: Frequently Asked Questions", Markdown: "# Frequently Asked Questions\n\nUse the mainpage command.\n"},
		},
		{
			name: "content selector and extra remove selectors",
			html: `<title>T</title><body><div id="a"><p>keep A</p><p class="ad">advert</p></div><div id="b"><p>not this</p></div><div id="a2"><p>keep B</p></div></body>`,
			cfg:  Config{ContentSelector: "#a, #a2", RemoveSelectors: []string{".ad"}},
			want: Doc{Title: "T", Markdown: "keep A\n\nkeep B\n"},
		},
		{
			name: "falls back to body; title from h1; article header kept",
			html: `<body><div><article><header><h1>Story title</h1></header><p>Body text.</p></article></div></body>`,
			want: Doc{Title: "Story title", Markdown: "# Story title\n\nBody text.\n"},
		},
		{
			name: "heading permalinks removed, links out of headings kept (Python-Markdown, Pelican, MkDocs)",
			html: `<main><h2 id="setup">Setting up<a class="headerlink" href="#setup" title="Permanent link">&para;</a></h2>
<p>Run the installer, then see <a href="#usage">usage</a>.</p>
<h2 id="portal"><a href="https://portal.example.org/">Self-service portal</a><a class="headerlink" href="#portal">&para;</a></h2>
<p>Log in with your account.</p>
<h3 id="elsewhere">Elsewhere <a href="https://other.example.org/guide#part">¶</a></h3><p>Not this page.</p></main>`,
			want: Doc{Markdown: "## Setting up\n\nRun the installer, then see [usage](https://www.example.edu/en/study/page/#usage).\n\n" +
				"## [Self-service portal](https://portal.example.org/)\n\nLog in with your account.\n\n" +
				"### Elsewhere [¶](https://other.example.org/guide#part)\n\nNot this page.\n"},
		},
		{
			name: "sections whose heading gave them a chrome id kept (Sphinx, MkDocs), the template's chrome not",
			html: `<main><div id="sidebar"><p>Site links</p></div><section id="navigation"><h2 id="menu">Menu</h2><p>Use the top bar.</p></section>
<div class="section" id="tabs"><h2>Tabs</h2><p>Open several.</p></div><div id="tabs"><p>Tab strip</p></div></main>`,
			want: Doc{Markdown: "## Menu\n\nUse the top bar.\n\n## Tabs\n\nOpen several.\n"},
		},
		{
			name: "DocBook's sidebars kept as text; link sidebars, navigation lists, banner and footer by id dropped",
			html: `<body><div id="banner"><a href="http://example.org/get/"><span class="text">Download the ebook</span></a></div><ul class="docnav top"><li class="previous"><a href="a.html"><strong>Prev</strong></a></li><li class="home">The Handbook</li></ul>
<div class="navheader"><table><tr><td><a href="a.html">Prev</a></td></tr></table></div>
<div class="section"><h2 class="title">9.7. Scheduling Tasks</h2><div class="para">Each user has their own crontab.</div>
<div class="sidebar"><div class="titlepage"><p class="title"><strong>SECURITY Restricting cron</strong></p></div>
<div class="para">You can restrict access to crontab by creating an explicit authorization file in /etc/cron.allow, in which you indicate the only users authorized to schedule commands.</div></div>
<div class="sidebar"><ul><li><a href="b.html">Scheduling tasks with cron and at, the full reference</a></li><li><a href="c.html">The anacron daemon for laptops and desktops</a></li><li><a href="d.html">Systemd timers and how they compare</a></li></ul><p>See also these.</p></div>
</div><div class="navfooter"><a href="b.html">Next</a></div><div id="footer"><p>Copyright 2026 The Foundation. Licensed under the License.</p></div></body>`,
			want: Doc{Markdown: "## 9.7. Scheduling Tasks\n\nEach user has their own crontab.\n\n**SECURITY Restricting cron**\n\n" +
				"You can restrict access to crontab by creating an explicit authorization file in /etc/cron.allow, in which you indicate the only users authorized to schedule commands.\n"},
		},
		{
			name: "Sphinx permalinks on sections, signatures and captions; a # link in a paragraph kept",
			html: `<div role="main"><section id="install"><h1>Install<a class="headerlink" href="#install" title="Link to this heading">#</a></h1>
<p class="caption" role="heading"><span class="caption-text">Steps</span><a class="headerlink" href="#toc1">¶</a></p>
<dl class="py function"><dt class="sig sig-object py" id="pkg.run"><span class="sig-name">run</span>(<em>job</em>)<a class="headerlink" href="#pkg.run" title="Link to this definition">¶</a></dt>
<dd><p>Starts a job.</p></dd></dl>
<figure id="fig1"><figcaption><p><span class="caption-text">The setup window.</span><a class="headerlink" href="#fig1" title="Link to this image">#</a></p></figcaption></figure>
<div class="literal-block-wrapper" id="code1"><div class="code-block-caption"><span class="caption-text">settings.py</span><a class="headerlink" href="#code1" title="Link to this code">¶</a></div></div>
<p>Ticket <a href="#t12">#</a> stays.</p></section></div>`,
			want: Doc{Title: "Install", Markdown: "# Install\n\nSteps\n\nrun(*job*)\n\nStarts a job.\n\nThe setup window.\n\nsettings.py\n\nTicket [#](https://www.example.edu/en/study/page/#t12) stays.\n"},
		},
		{
			name: "Docusaurus hash links (zero-width text, the page's own URL) removed, heading class anchor kept",
			html: `<main><article><div class="theme-doc-markdown markdown"><header><h1>Payments</h1></header>
<h2 class="anchor anchorWithStickyNavbar_x" id="refunds">Refunds<a href="#refunds" class="hash-link" aria-label="Direct link to Refunds" title="Direct link to Refunds">&#8203;</a></h2>
<p>Refunds take five days.</p>
<h3 class="anchor" id="limits">Limits<a class="hash-link" href="/en/study/page/#limits">&#8203;</a></h3><p>Up to 100.</p></div></article></main>`,
			want: Doc{Title: "Payments", Markdown: "# Payments\n\n## Refunds\n\nRefunds take five days.\n\n### Limits\n\nUp to 100.\n"},
		},
		{
			name: "a link wrapping the heading's own text loses the link (mdBook), a link beside a heading to it goes (Starlight)",
			html: `<main><h2 id="usage"><a class="header" href="#usage">Usage</a></h2><p>Call it once.</p>
<div class="heading-wrapper"><h2 id="faq">Questions</h2><a class="anchor-link" href="#faq"><span aria-hidden="true"></span><span class="sr-only">Section titled Questions</span></a></div>
<p>Ask on the list.</p><h2 id="other"><a href="#usage">See usage</a></h2></main>`,
			want: Doc{Markdown: "## Usage\n\nCall it once.\n\n## Questions\n\nAsk on the list.\n\n## [See usage](https://www.example.edu/en/study/page/#usage)\n"},
		},
		{
			name: "Docusaurus page contents, version banner and doc footer removed",
			html: `<main><div class="row"><div class="col"><div class="theme-doc-version-banner alert">This is documentation for an old release.</div>
<article><nav class="theme-doc-breadcrumbs" aria-label="Breadcrumbs"><ul><li>Guides</li></ul></nav>
<span class="theme-doc-version-badge badge">Version: 1.2</span>
<div class="theme-doc-toc-mobile tocMobile_x"><button>On this page</button></div>
<div class="theme-doc-markdown markdown"><header><h1>Webhooks</h1></header><p>Each event is signed with your secret.</p></div>
<footer class="theme-doc-footer docusaurus-mt-lg"><div class="theme-doc-footer-edit-meta-row"><a href="https://git.example.org/edit/webhooks.md" class="theme-edit-this-page">Edit this page</a></div></footer></article>
<nav class="pagination-nav"><a href="/prev">Previous</a></nav></div>
<div class="col col--3"><div class="theme-doc-toc-desktop"><ul class="table-of-contents"><li><a href="#signing">Signing</a></li></ul></div></div></div></main>`,
			want: Doc{Title: "Webhooks", Markdown: "# Webhooks\n\nEach event is signed with your secret.\n"},
		},
		{
			name: "pydata-sphinx-theme's right-hand column and Furo's page links removed",
			html: `<title>Backups</title><main id="main-content" class="bd-main" role="main"><div class="bd-content"><article class="bd-article">
<h1>Backups</h1><p>Snapshots are taken nightly.</p></article>
<div class="bd-sidebar-secondary bd-toc"><div class="page-toc tocsection onthispage">On this page</div>
<div class="tocsection sourcelink"><a href="../_sources/backups.rst.txt">Show Source</a></div></div></div>
<div class="tocsection editthispage"><a href="https://git.example.org/edit/backups.rst">Edit on GitHub</a></div>
<div class="edit-this-page"><a class="muted-link" href="https://git.example.org/edit/backups.rst"><span class="visually-hidden">Edit this page</span></a></div>
<a href="#" class="back-to-top muted-link"><span>Back to top</span></a></main>`,
			want: Doc{Title: "Backups", Markdown: "# Backups\n\nSnapshots are taken nightly.\n"},
		},
		{
			name: "MediaWiki edit links, jump links, contents, categories and print footer removed",
			html: `<title>Harbour - Example Wiki</title><div id="content" class="mw-body"><a class="mw-jump-link" href="#searchInput">Jump to search</a>
<div id="mw-content-text"><p>The harbour opened in 1871.</p>
<div id="toc" class="toc"><h2 id="mw-toc-heading">Contents</h2><ul><li><a href="#History"><span class="toctext">History</span></a></li></ul></div>
<h2><span class="mw-headline" id="History">History</span><span class="mw-editsection"><span class="mw-editsection-bracket">[</span><a href="/w/index.php?title=Harbour&amp;action=edit&amp;section=1" title="Edit section: History">edit</a><span class="mw-editsection-bracket">]</span></span></h2>
<p>It was enlarged in 1902.</p></div>
<div class="printfooter">Retrieved from "https://wiki.example.org/w/index.php?title=Harbour"</div>
<div id="catlinks" class="catlinks"><a href="/wiki/Special:Categories">Categories</a>: Ports</div></div>`,
			want: Doc{Title: "Harbour", Markdown: "The harbour opened in 1871.\n\n## History\n\nIt was enlarged in 1902.\n"},
		},
		{
			name: "WordPress post footer, comments and Jetpack blocks removed, entry header kept",
			html: `<title>Open day &#8211; Example Club</title><main id="main" class="site-main"><article class="post type-post">
<header class="entry-header"><h1 class="entry-title">Open day</h1></header>
<div class="entry-content"><p>The club opens its doors on 4 May.</p>
<div class="sharedaddy sd-sharing-enabled"><h3 class="sd-title">Share this:</h3></div>
<div id="jp-relatedposts" class="jp-relatedposts"><h3>Related</h3></div></div>
<footer class="entry-footer"><span class="cat-links">Posted in News</span></footer></article>
<div id="comments" class="comments-area"><h2 class="comments-title">2 thoughts on Open day</h2><ol class="comment-list"><li>See you there!</li></ol>
<div id="respond" class="comment-respond"><h3>Leave a Reply</h3></div></div>
<div class="widget-wrap" role="complementary"><h2>Recent posts</h2></div></main>`,
			want: Doc{Title: "Open day", Markdown: "# Open day\n\nThe club opens its doors on 4 May.\n"},
		},
		{
			name: "blank-line runs collapsed, no-break spaces made plain, no escaping",
			html: "<main><p>ECON&#160;1</p><br><br><br><br><p>next bioe_chair@x.edu *starred*</p></main>",
			want: Doc{Markdown: "ECON 1\n\nnext bioe_chair@x.edu *starred*\n"},
		},
		{
			name: "soft hyphens, zero-width spaces, word joiners and byte-order marks dropped, in the title too",
			html: "<title>Exam&shy;inations</title><main><p>\ufeffretain final examin&shy;ations for 13&#8203;months, www.&#x200B;example&#8288;.org</p></main>",
			want: Doc{Title: "Examinations", Markdown: "retain final examinations for 13months, www.example.org\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := HTML([]byte(tt.html), page, tt.cfg)
			if err != nil {
				t.Fatalf("HTML: %v", err)
			}
			got.Anchors = nil // TestAnchors reads them
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewRejectsBadSelectors(t *testing.T) {
	for _, cfg := range []Config{{ContentSelector: "main["}, {RemoveSelectors: []string{"div >"}}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded, want an error", cfg)
		}
	}
}

func FuzzHTML(f *testing.F) {
	for _, s := range []string{
		`<main><h1>x</h1><table><tr><td>a<br>b</td></tr></table></main>`,
		`<title>a | b</title><div id="t" role="tabpanel">x</div><li aria-controls="t">T</li>`,
		`<script>var secret = 1;</script><p>text</p>`,
		`<main><script>secret()</script><noscript>secret</noscript></main>`,
	} {
		f.Add(s)
	}
	c, err := New(Config{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		// Mark every script body so its content can be recognised in the output.
		in = strings.ReplaceAll(in, "<script>", "<script>SCRIPTBODY")
		doc, err := c.HTML([]byte(in), "http://example.org/p/")
		if err != nil {
			return
		}
		if strings.Contains(doc.Markdown, "SCRIPTBODY") && onlyInScripts(t, in, "SCRIPTBODY") {
			t.Fatalf("script content in the output: %q", doc.Markdown)
		}
		if strings.Contains(doc.Markdown, "\n\n\n") {
			t.Fatalf("blank-line run in the output: %q", doc.Markdown)
		}
	})
}

// onlyInScripts reports whether every occurrence of marker in the parsed
// document is inside a <script> element (malformed input can turn the
// "<script>" the fuzz target inserted into plain text).
func onlyInScripts(t *testing.T, doc, marker string) bool {
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	ok := true
	var walk func(n *html.Node, inScript bool)
	walk = func(n *html.Node, inScript bool) {
		if n.Type == html.TextNode && !inScript && strings.Contains(n.Data, marker) {
			ok = false
		}
		if n.Type == html.ElementNode && n.Data != "script" && strings.Contains(n.Data, marker) {
			ok = false
		}
		if n.Type == html.ElementNode && n.Data != "script" {
			for _, a := range n.Attr {
				if strings.Contains(a.Val, marker) || strings.Contains(a.Key, marker) {
					ok = false
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inScript || n.Type == html.ElementNode && n.Data == "script")
		}
	}
	walk(root, false)
	return ok
}

func TestHTMLConverterPanicIsAnError(t *testing.T) {
	// html-to-markdown v2.5.2 indexes out of range on this heading (found by FuzzPruneSpace).
	_, err := HTML([]byte("<body>\x00\x00\x04\x00 <h1>#  <h1000</body>"), "http://example.edu/", Config{})
	if err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("HTML = %v, want the converter's panic as an error", err)
	}
}
