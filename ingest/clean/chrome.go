package clean

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// chrome lists what the cleaner removes from the main content by default:
// elements that never carry page text, and site chrome (navigation, page
// header and footer, sidebars, breadcrumbs, skip links, cookie banners, share
// and print widgets, and the CourseLeaf catalogue's menus, tab bar, promotions
// and "Read More" toggles), matched by tag, id, class or ARIA role. <header>
// and <footer> inside an <article> are kept (they hold its title). It is
// matched in one walk over the tree: a CSS selector group of the same rules
// cost more than parsing the page.
//
// Documentation and blog generators put more chrome inside the element that
// holds the page's content, and their class names are their own, so whole
// tokens name it without catching content: Docusaurus's page table of
// contents, version banner and doc footer (edit link, last update, tags;
// inside its <article>, so the footer rule keeps it), pydata-sphinx-theme's
// right-hand column ("On this page", "Show Source", "Edit on GitHub") and
// Furo's "Edit this page" and "Back to top" links, MediaWiki's section edit
// links, jump links, table of contents, category bar and "Retrieved from"
// line, and the comment section and post footer of WordPress themes (Twenty
// Fifteen onwards and the _s starter keep both inside <main>) with Jetpack's
// share and related-posts blocks. role=complementary is the ARIA role of an
// <aside>, which is removed already. Heading permalinks are found by structure
// instead (see stripper.anchor).
type chrome struct {
	tags, ids, classes, roles map[string]bool
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

func defaultChrome() chrome {
	return chrome{
		tags: set("head", "script", "style", "noscript", "template", "svg", "iframe", "object", "embed", "canvas",
			"img", "picture", "video", "audio", "map", "link", "meta", "form", "input", "button", "select",
			"textarea", "nav", "aside", "dialog"),
		ids: set("breadcrumb", "breadcrumbs", "cl-menu", "sidebar", "menu", "navigation", "cookie-banner",
			"cookie-consent", "cookie-notice", "print-dialog", "tabs", "totop", "skip-link", "skiplinks",
			// MediaWiki's in-page table of contents (older releases give it no navigation role).
			"toc",
			// The page banner, header and footer of templates that give them an id rather than their element or
			// role (Publican's "Download the ebook" strip, the Apache HTTP Server manual's copyright footer).
			"banner", "header", "footer", "page-header", "page-footer", "site-header", "site-footer"),
		classes: set("breadcrumb", "breadcrumbs", "skip-link", "skip-links", "skiplink", "skip-to-content",
			"accessible-menu", "cl-menu", "sidebar", "menu", "navbar", "navigation", "cookie-banner",
			"cookie-consent", "cookie-notice", "share", "social-share", "sharing", "print", "print-dialog",
			"print-options", "tab-control", "promo-blocks", "archive-message", "btn-readmore", "btn-readless",
			"visually-hidden-focusable", "screen-reader-shortcut",
			// Docusaurus (theme-classic).
			"theme-doc-toc-desktop", "theme-doc-toc-mobile", "theme-doc-footer", "theme-edit-this-page",
			"theme-doc-version-banner", "theme-doc-version-badge",
			// Sphinx themes: pydata's secondary sidebar (page contents, "Show Source", "Edit on GitHub") and its
			// links on their own, Furo's page icons and back-to-top link.
			"bd-sidebar-secondary", "sourcelink", "editthispage", "edit-this-page", "view-this-page", "back-to-top",
			// DocBook's HTML: the XSL stylesheets' navigation header and footer, Publican's "Prev / Home / Next"
			// lists.
			"navheader", "navfooter", "docnav",
			// MediaWiki.
			"mw-editsection", "mw-jump-link", "printfooter", "catlinks",
			// WordPress themes and Jetpack.
			"comments-area", "comment-respond", "entry-footer", "sharedaddy", "jp-relatedposts"),
		roles: set("navigation", "banner", "contentinfo", "search", "tablist", "complementary"),
	}
}

// match reports whether n is chrome; inArticle says n is inside an <article>.
func (c *chrome) match(n *html.Node, inArticle bool) bool {
	if c.tags[n.Data] {
		return true
	}
	if (n.Data == "header" || n.Data == "footer") && !inArticle {
		return true
	}
	for _, a := range n.Attr {
		switch a.Key {
		case "id":
			if id := strings.ToLower(a.Val); c.ids[id] && !namedByHeading(n) && !(id == "sidebar" && prose(n)) {
				return true
			}
		case "class":
			if anyClass(a.Val, func(cl string) bool { return c.class(cl) && !(strings.EqualFold(cl, "sidebar") && prose(n)) }) {
				return true
			}
		case "role":
			if c.roles[strings.ToLower(a.Val)] {
				return true
			}
		case "aria-label":
			if strings.EqualFold(a.Val, "breadcrumb") {
				return true
			}
		case "summary":
			// The DocBook XSL stylesheets' navigation tables, "Navigation header" and "Navigation footer", also
			// where a customisation puts them outside the navheader and navfooter blocks (Valgrind's manual).
			if strings.HasPrefix(strings.ToLower(a.Val), "navigation ") {
				return true
			}
		}
	}
	return false
}

// namedByHeading reports whether n may carry an id that its heading's text gave it: Sphinx (docutils) puts a
// section's id, made from its title, on the <section> or div.section that holds it, and Python-Markdown (so
// MkDocs and Pelican), Hugo, Jekyll and Docusaurus put one on the heading. A section titled "Navigation" or
// "Tabs" is content; the id rules are for the chrome elements of page templates.
func namedByHeading(n *html.Node) bool {
	return isHeading(n) || n.DataAtom == atom.Section || n.DataAtom == atom.Div && hasClass(n, "section")
}

// prose reports whether n reads as text rather than as a list of links: at least proseWords words, fewer than
// half of them in links. A "sidebar" is site chrome in most page templates (a column of menus and links), but
// DocBook's HTML (its XSL stylesheets, Publican) writes the book's own sidebars, the boxed asides of technical
// books ("SECURITY Restricting cron", "TIP", "BACK TO BASICS"), as div.sidebar inside the text, and they hold
// facts the text does not repeat.
func prose(n *html.Node) bool {
	words := len(strings.Fields(nodeText(n)))
	if words < proseWords {
		return false
	}
	linked := 0
	var walk func(*html.Node)
	walk = func(m *html.Node) {
		for ch := m.FirstChild; ch != nil; ch = ch.NextSibling {
			if ch.Type != html.ElementNode {
				continue
			}
			if ch.DataAtom == atom.A {
				linked += len(strings.Fields(nodeText(ch)))
				continue
			}
			walk(ch)
		}
	}
	walk(n)
	return 2*linked < words
}

// proseWords is the fewest words a sidebar that reads as text holds: about two sentences.
const proseWords = 20

// class reports whether cl is a chrome class, ignoring case.
func (c *chrome) class(cl string) bool {
	if c.classes[cl] {
		return true
	}
	for i := 0; i < len(cl); i++ {
		if b := cl[i]; 'A' <= b && b <= 'Z' || b >= utf8.RuneSelf {
			return c.classes[strings.ToLower(cl)]
		}
	}
	return false
}

// stripper walks a page's main content once, removing comments, chrome (see chrome) and heading permalinks
// (see anchor).
type stripper struct {
	chrome  *chrome
	pageURL string
	page    *url.URL // pageURL parsed, when a link needs it
	parsed  bool
}

// strip removes comments, chrome and heading permalinks under n; inArticle says n is inside an <article>,
// heading is the heading-like element n is in (see headingLike), or nil.
func (s *stripper) strip(n *html.Node, inArticle bool, heading *html.Node) {
	for ch := n.FirstChild; ch != nil; {
		next := ch.NextSibling
		switch {
		case ch.Type == html.CommentNode:
			n.RemoveChild(ch)
		case ch.Type != html.ElementNode:
		case s.chrome.match(ch, inArticle) || pager(ch):
			n.RemoveChild(ch)
		case ch.DataAtom == atom.A && s.anchor(ch, heading):
			n.RemoveChild(ch)
		default:
			h := heading
			if h == nil && headingLike(ch) {
				h = ch
			}
			s.strip(ch, inArticle || ch.DataAtom == atom.Article, h)
			if ch.DataAtom == atom.A && heading != nil && s.selfLink(ch, heading) {
				unwrap(ch)
			}
		}
		ch = next
	}
}

// pager reports whether n, a paragraph or block, only leads to other pages of a sequence: two links or more,
// each with a rel of the sequence ("next", "prev", "up", "contents", "index"), and nothing else but a few words
// of label ("Next:", "Previous:"). Texinfo puts one before every node of a manual ("Next: Introduction,
// Previous: (dir), Up: (dir) [Contents][Index]"), in a <div class="header"> too common a name to remove.
func pager(n *html.Node) bool {
	if n.DataAtom != atom.P && n.DataAtom != atom.Div {
		return false
	}
	links, label := 0, 0
	var walk func(n *html.Node) bool
	walk = func(n *html.Node) bool {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c.Type == html.TextNode:
				label += utf8.RuneCountInString(strings.TrimSpace(c.Data))
			case c.Type != html.ElementNode:
			case c.DataAtom == atom.A:
				if !sequenceRel(attr(c, "rel")) {
					return false
				}
				links++
			case !walk(c):
				return false
			}
		}
		return true
	}
	return walk(n) && links >= 2 && label <= pagerLabelRunes
}

// pagerLabelRunes bounds the text of a pager outside its links: its labels and punctuation.
const pagerLabelRunes = 48

// sequenceRel reports whether a link's rel says where it leads in a sequence of pages (HTML's link types).
func sequenceRel(rel string) bool {
	for _, r := range strings.Fields(strings.ToLower(rel)) {
		switch r {
		case "next", "prev", "previous", "up", "contents", "index", "start", "first", "last":
			return true
		}
	}
	return false
}

// anchor reports whether the link a is a heading permalink: a link to a fragment of the page itself, with a
// permalink sign or nothing for text, inside a heading, beside one or of class headerlink; or a link beside
// a heading to that heading's own id, whatever its text. Python-Markdown's toc extension (so MkDocs and
// Pelican) and Sphinx end each heading with <a class="headerlink" href="#id">¶</a> (pydata-sphinx-theme
// writes "#"; Sphinx adds the same link to API signatures in <dt> and to figure, table and code-block
// captions, the last a plain <div>); Docusaurus ends it with a.hash-link holding a zero-width space;
// VuePress, VitePress and markdown-it-anchor with a.header-anchor "#" or a zero-width space; GitHub's
// renderer, Jekyll's just-the-docs and many Hugo themes with an icon link (empty once the icon is gone);
// Astro Starlight puts the link after the heading in a wrapper, its text a screen-reader "Section titled
// ...". A heading that links elsewhere keeps its link.
func (s *stripper) anchor(a, heading *html.Node) bool {
	if heading != nil || hasClass(a, "headerlink") {
		_, ok := s.fragment(a)
		return ok && permalinkText(a)
	}
	for _, sib := range [2]*html.Node{prevElement(a), nextElement(a)} {
		if sib == nil || !isHeading(sib) {
			continue
		}
		if frag, ok := s.fragment(a); ok && (frag != "" && frag == attr(sib, "id") || permalinkText(a)) {
			return true
		}
	}
	return false
}

// selfLink reports whether the link a inside heading links to the heading itself (its id, or its parent's,
// where Sphinx puts it on the section): mdBook and markdown-it-anchor's "header link" style wrap the
// whole heading text in such a link. Its text stays, without the link.
func (s *stripper) selfLink(a, heading *html.Node) bool {
	frag, ok := s.fragment(a)
	if !ok || frag == "" {
		return false
	}
	if frag == attr(heading, "id") {
		return true
	}
	return heading.Parent != nil && heading.Parent.Type == html.ElementNode && frag == attr(heading.Parent, "id")
}

// fragment returns the fragment of the link a when it points into the page itself ("#x", or the page's own
// URL with "#x", as Docusaurus writes under some base URLs).
func (s *stripper) fragment(a *html.Node) (string, bool) {
	href := strings.TrimSpace(attr(a, "href"))
	i := strings.IndexByte(href, '#')
	if i < 0 {
		return "", false
	}
	if i > 0 {
		if !s.parsed {
			s.page, _ = url.Parse(s.pageURL)
			s.parsed = true
		}
		u, err := url.Parse(href)
		if s.page == nil || err != nil {
			return "", false
		}
		u = s.page.ResolveReference(u)
		if u.Scheme != s.page.Scheme || u.Host != s.page.Host || u.Path != s.page.Path || u.RawQuery != s.page.RawQuery {
			return "", false
		}
	}
	frag, err := url.PathUnescape(href[i+1:])
	if err != nil {
		frag = href[i+1:]
	}
	return frag, true
}

// permalinkText reports whether the text of the link a is a permalink sign (¶, #, §, 🔗) or nothing, once
// spaces and zero-width characters are dropped.
func permalinkText(a *html.Node) bool {
	t := strings.TrimFunc(nodeText(a), func(r rune) bool {
		return unicode.IsSpace(r) || r == '\u200b' || r == '\u200c' || r == '\u200d' || r == '\u2060' || r == '\ufeff' || r == '\ufe0f'
	})
	switch t {
	case "", "¶", "#", "§", "🔗":
		return true
	}
	return false
}

// headingLike reports whether n titles what follows it and may end with a permalink: h1-h6, a definition
// term (Sphinx's API signatures), a caption, or an element with role=heading (Sphinx's toctree captions).
func headingLike(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Dt, atom.Caption, atom.Figcaption:
		return true
	case atom.P, atom.Div, atom.Span:
		return attr(n, "role") == "heading"
	}
	return isHeading(n)
}

// hasClass reports whether cl is one of n's classes.
func hasClass(n *html.Node, cl string) bool {
	return anyClass(attr(n, "class"), func(c string) bool { return c == cl })
}

// anyClass reports whether f is true of one of the classes of the class list v. The list is split by hand:
// strings.Fields allocated for every element of every page.
func anyClass(v string, f func(class string) bool) bool {
	for v != "" {
		i := strings.IndexFunc(v, unicode.IsSpace)
		if i < 0 {
			i = len(v)
		}
		if i > 0 && f(v[:i]) {
			return true
		}
		v = strings.TrimLeftFunc(v[i:], unicode.IsSpace)
	}
	return false
}

// isHeading reports whether n is h1-h6.
func isHeading(n *html.Node) bool {
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	}
	return false
}

func prevElement(n *html.Node) *html.Node {
	return adjacentElement(n, func(p *html.Node) *html.Node { return p.PrevSibling })
}

func nextElement(n *html.Node) *html.Node {
	return adjacentElement(n, func(p *html.Node) *html.Node { return p.NextSibling })
}

// adjacentElement is the first element from n in the direction step takes, past whitespace and comments; nil
// when text comes first.
func adjacentElement(n *html.Node, step func(*html.Node) *html.Node) *html.Node {
	for p := step(n); p != nil; p = step(p) {
		if p.Type == html.ElementNode {
			return p
		}
		if p.Type == html.TextNode && strings.TrimSpace(p.Data) != "" {
			return nil
		}
	}
	return nil
}

// unwrap replaces n by its children.
func unwrap(n *html.Node) {
	for c := n.FirstChild; c != nil; c = n.FirstChild {
		n.RemoveChild(c)
		n.Parent.InsertBefore(c, n)
	}
	n.Parent.RemoveChild(n)
}
