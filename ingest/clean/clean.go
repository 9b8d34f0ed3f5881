// Package clean turns a fetched page into the text ingest indexes: the main
// content of an HTML page as markdown (site chrome removed, links absolute,
// headings and tables kept), or the text of a PDF.
//
// A Cleaner holds compiled selectors and a markdown converter and is safe for
// concurrent use; HTML and PDF are convenience functions for one-off calls.
package clean

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Doc is a cleaned page.
type Doc struct {
	// Title is the page's <title> (or first h1) without the site's suffix.
	Title string
	// Markdown is the main content: headings as "#" lines, paragraphs and
	// blocks separated by a blank line, list items on their own lines, tables
	// as markdown tables, links absolute.
	Markdown string
}

// Config selects the content of a page. The zero value uses the defaults.
type Config struct {
	// ContentSelector is a CSS selector for the main content; every match is
	// kept, in document order. Default: the first of DefaultContentSelectors
	// that matches an element with text, else <body>.
	ContentSelector string
	// RemoveSelectors are CSS selectors removed from the content, in addition
	// to the built-in chrome rules (see the chrome type: navigation, header,
	// footer, sidebars, breadcrumbs, cookie banners, scripts, forms...).
	RemoveSelectors []string
}

// DefaultContentSelectors returns the selectors tried in order to find a
// page's main content.
func DefaultContentSelectors() []string {
	return []string{"main", "[role=main]", "article", "#content", "#main", "#main-content", ".main-content", ".content"}
}

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
			"toc"),
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
			if c.ids[strings.ToLower(a.Val)] {
				return true
			}
		case "class":
			// Class lists are split by hand: strings.Fields allocated for every element of every page.
			for v := a.Val; v != ""; {
				i := strings.IndexFunc(v, unicode.IsSpace)
				if i < 0 {
					i = len(v)
				}
				if i > 0 && c.class(v[:i]) {
					return true
				}
				v = strings.TrimLeftFunc(v[i:], unicode.IsSpace)
			}
		case "role":
			if c.roles[strings.ToLower(a.Val)] {
				return true
			}
		case "aria-label":
			if strings.EqualFold(a.Val, "breadcrumb") {
				return true
			}
		}
	}
	return false
}

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
		case s.chrome.match(ch, inArticle):
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
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Dt, atom.Caption, atom.Figcaption:
		return true
	case atom.P, atom.Div, atom.Span:
		return attr(n, "role") == "heading"
	}
	return false
}

// hasClass reports whether cl is one of n's classes.
func hasClass(n *html.Node, cl string) bool {
	for v := attr(n, "class"); v != ""; {
		i := strings.IndexFunc(v, unicode.IsSpace)
		if i < 0 {
			i = len(v)
		}
		if v[:i] == cl {
			return true
		}
		v = strings.TrimLeftFunc(v[i:], unicode.IsSpace)
	}
	return false
}

func isHeading(n *html.Node) bool {
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	}
	return false
}

func prevElement(n *html.Node) *html.Node {
	for p := n.PrevSibling; p != nil; p = p.PrevSibling {
		if p.Type == html.ElementNode {
			return p
		}
		if p.Type == html.TextNode && strings.TrimSpace(p.Data) != "" {
			return nil
		}
	}
	return nil
}

func nextElement(n *html.Node) *html.Node {
	for p := n.NextSibling; p != nil; p = p.NextSibling {
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

// Cleaner cleans pages with one configuration.
type Cleaner struct {
	content []cascadia.Selector
	chrome  chrome
	remove  cascadia.Selector // Config.RemoveSelectors; nil when none
	// convs holds converters, one per concurrent HTML call: a shared converter takes a read lock and copies
	// and sorts its handler lists for every node, and the lock's counter bouncing between cores cost a tenth
	// of the conversion.
	convs           sync.Pool
	records         *records
	title, h1, body cascadia.Selector
}

// New compiles cfg's selectors.
func New(cfg Config) (*Cleaner, error) {
	c := &Cleaner{chrome: defaultChrome(), records: newRecords()}
	content := DefaultContentSelectors()
	if cfg.ContentSelector != "" {
		content = []string{cfg.ContentSelector}
	}
	for _, s := range content {
		sel, err := cascadia.Compile(s)
		if err != nil {
			return nil, fmt.Errorf("clean: content selector %q: %w", s, err)
		}
		c.content = append(c.content, sel)
	}
	for _, s := range cfg.RemoveSelectors {
		if _, err := cascadia.Compile(s); err != nil {
			return nil, fmt.Errorf("clean: remove selector %q: %w", s, err)
		}
	}
	if len(cfg.RemoveSelectors) > 0 {
		sel, err := cascadia.Compile(strings.Join(cfg.RemoveSelectors, ", "))
		if err != nil {
			return nil, fmt.Errorf("clean: remove selectors: %w", err)
		}
		c.remove = sel
	}
	c.title, c.h1, c.body = cascadia.MustCompile("title"), cascadia.MustCompile("h1"), cascadia.MustCompile("body")
	c.convs.New = func() any { return newConverter() }
	return c, nil
}

func newConverter() *converter.Converter {
	return converter.NewConverter(
		// Markdown escaping ("\*", "\_") costs a fifth of the conversion and
		// only adds noise to text that is embedded, searched and read by a
		// model; the one escape that matters, "|" inside table cells, is done
		// by flattenCells.
		converter.WithEscapeMode(converter.EscapeModeDisabled),
		converter.WithPlugins(
			base.NewBasePlugin(),
			commonmark.NewCommonmarkPlugin(
				// Anchors like CourseLeaf's <a name="x"></a> or icon links render as nothing.
				commonmark.WithLinkEmptyContentBehavior(commonmark.LinkBehaviorSkip),
			),
			table.NewTablePlugin(
				table.WithSkipEmptyRows(true),
				table.WithHeaderPromotion(true),
				table.WithPresentationTables(true),
				table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal),
				table.WithSpanCellBehavior(table.SpanBehaviorEmpty),
				// A cell whose content still spans lines keeps them as <br />
				// (tidy turns them into spaces) rather than losing the table.
				table.WithNewlineBehavior(table.NewlineBehaviorPreserve),
			),
		))
}

// HTML cleans one HTML page with cfg. To clean many pages, build a Cleaner
// once with New.
func HTML(body []byte, pageURL string, cfg Config) (Doc, error) {
	c, err := New(cfg)
	if err != nil {
		return Doc{}, err
	}
	return c.HTML(body, pageURL)
}

// HTML extracts the title and the main content of an HTML page as markdown.
// Relative links are resolved against pageURL.
func (c *Cleaner) HTML(body []byte, pageURL string) (Doc, error) {
	root, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return Doc{}, fmt.Errorf("clean html %s: %w", pageURL, err)
	}
	return c.HTMLTree(root, body, pageURL)
}

// HTMLTree is HTML for a caller that has parsed the page already (root is html.Parse's result for body, as the
// FAQ extraction reads it first): it changes the tree, and parses body again in the rare case that it must
// convert the page a second way.
func (c *Cleaner) HTMLTree(root *html.Node, body []byte, pageURL string) (Doc, error) {
	d, err := c.html(root, pageURL, true)
	if errors.Is(err, errRecords) {
		if root, err = html.Parse(bytes.NewReader(body)); err != nil {
			return Doc{}, fmt.Errorf("clean html %s: %w", pageURL, err)
		}
		return c.html(root, pageURL, false)
	}
	return d, err
}

// html is HTML of the parsed page root, converting repeated records once (see records) when withRecords is
// set.
func (c *Cleaner) html(root *html.Node, pageURL string, withRecords bool) (Doc, error) {
	doc := goquery.NewDocumentFromNode(root)
	title := c.pageTitle(doc)
	tabs := tabNames(doc)

	roots := c.mainContent(doc)
	recs := make([][]record, len(roots))
	st := stripper{chrome: &c.chrome, pageURL: pageURL}
	for i, r := range roots {
		st.strip(r, insideArticle(r), nil)
		if c.remove != nil {
			goquery.NewDocumentFromNode(r).FindMatcher(c.remove).Remove()
		}
		labelTabs(r, tabs)
		flattenCells(r)
		pruneSpace(r)
		if withRecords {
			recs[i] = c.records.mark(r, pageURL)
		}
	}

	conv := c.convs.Get().(*converter.Converter)
	defer c.convs.Put(conv)
	var out strings.Builder
	for i, r := range roots {
		md, err := convertNode(conv, r, pageURL)
		if err != nil {
			return Doc{}, fmt.Errorf("clean html %s: %w", pageURL, err)
		}
		text, ok := c.records.splice(string(md), recs[i])
		if !ok {
			return Doc{}, fmt.Errorf("clean html %s: %w", pageURL, errRecords)
		}
		if out.Len() > 0 {
			out.WriteString("\n\n")
		}
		out.WriteString(text)
	}
	if title == "" {
		title = firstMarkdownHeading(out.String())
	}
	return Doc{Title: title, Markdown: tidy(out.String())}, nil
}

// convertNode converts n with conv. html-to-markdown panics on some malformed
// headings ("<h1>#  <h1>" indexes before the start of its output); a page
// that trips it is reported as an error rather than ending the ingest.
func convertNode(conv *converter.Converter, n *html.Node, pageURL string) (md []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			md, err = nil, fmt.Errorf("markdown converter panicked: %v", r)
		}
	}()
	return conv.ConvertNode(n, converter.WithDomain(pageURL))
}

// mainContent returns the nodes to convert: every match of the configured
// selector, or the first default selector matching an element with text, or
// the body.
func (c *Cleaner) mainContent(doc *goquery.Document) []*html.Node {
	for _, sel := range c.content {
		var nodes []*html.Node
		doc.FindMatcher(sel).Each(func(_ int, s *goquery.Selection) {
			if hasText(s.Nodes[0]) {
				nodes = append(nodes, s.Nodes[0])
			}
		})
		nodes = outermost(nodes)
		if len(nodes) > 0 {
			if len(c.content) > 1 { // a default: the first match is the main content
				return nodes[:1]
			}
			return nodes
		}
	}
	if body := doc.FindMatcher(c.body); body.Length() > 0 {
		return body.Nodes[:1]
	}
	return doc.Nodes
}

// outermost drops nodes nested inside another node of the list.
func outermost(nodes []*html.Node) []*html.Node {
	in := make(map[*html.Node]bool, len(nodes))
	for _, n := range nodes {
		in[n] = true
	}
	out := nodes[:0]
	for _, n := range nodes {
		nested := false
		for p := n.Parent; p != nil; p = p.Parent {
			if in[p] {
				nested = true
				break
			}
		}
		if !nested {
			out = append(out, n)
		}
	}
	return out
}

func insideArticle(n *html.Node) bool {
	for p := n; p != nil; p = p.Parent {
		if p.Type == html.ElementNode && p.Data == "article" {
			return true
		}
	}
	return false
}

// pageTitle returns the <title> without the site suffix, or the first h1.
func (c *Cleaner) pageTitle(doc *goquery.Document) string {
	t := collapseSpace(doc.FindMatcher(c.title).First().Text())
	// Separators between a page title and the site name, strongest first.
	for _, sep := range []string{" | ", " < ", " :: ", " » ", " — ", " – ", " - "} {
		if i := strings.LastIndex(t, sep); i > 0 {
			t = strings.TrimSpace(t[:i])
			break
		}
	}
	if t != "" {
		return t
	}
	h1 := doc.FindMatcher(c.h1)
	if h1.Length() == 0 {
		return ""
	}
	return collapseSpace(headingText(h1.Nodes[0]))
}

// headingText is the text of the heading h without its permalinks (see stripper.anchor): the title is read
// before the content is stripped.
func headingText(h *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && c.DataAtom == atom.A && strings.Contains(attr(c, "href"), "#") && permalinkText(c) {
				continue
			}
			walk(c)
		}
	}
	walk(h)
	return b.String()
}

// tabNames maps the id of each tab panel to the label of the tab that shows
// it: the text of an element with aria-controls (ARIA tabs, CourseLeaf's tab
// list), or of a link to "#id" inside a role=tablist element.
func tabNames(doc *goquery.Document) map[string]string {
	names := make(map[string]string)
	var walk func(n *html.Node, inTablist bool)
	walk = func(n *html.Node, inTablist bool) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode || c.DataAtom == atom.Script || c.DataAtom == atom.Style || c.DataAtom == atom.Head {
				continue
			}
			if id := attr(c, "aria-controls"); id != "" {
				if label := collapseSpace(nodeText(c)); label != "" {
					names[id] = label
				}
			} else if href := attr(c, "href"); inTablist && c.DataAtom == atom.A && len(href) > 1 && href[0] == '#' {
				if _, ok := names[href[1:]]; !ok {
					if label := collapseSpace(nodeText(c)); label != "" {
						names[href[1:]] = label
					}
				}
			}
			walk(c, inTablist || attr(c, "role") == "tablist")
		}
	}
	for _, n := range doc.Nodes {
		walk(n, false)
	}
	return names
}

// labelTabs gives every tab panel under root a heading with its tab's label
// unless its first heading already says it, so content hidden behind tabs
// keeps the name a visitor would click.
func labelTabs(root *html.Node, tabs map[string]string) {
	if len(tabs) == 0 {
		return
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			if label, ok := tabs[attr(c, "id")]; ok && hasText(c) {
				if h := firstHeading(c); h == nil || !strings.EqualFold(collapseSpace(nodeText(h)), label) {
					heading := &html.Node{Type: html.ElementNode, Data: "h2", DataAtom: atom.H2}
					heading.AppendChild(&html.Node{Type: html.TextNode, Data: label})
					c.InsertBefore(heading, c.FirstChild)
				}
			}
			walk(c)
		}
	}
	walk(root)
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasText(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode && strings.TrimSpace(c.Data) != "" || c.Type == html.ElementNode && hasText(c) {
			return true
		}
	}
	return false
}

func firstHeading(n *html.Node) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		switch c.DataAtom {
		case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
			return c
		}
		if h := firstHeading(c); h != nil {
			return h
		}
	}
	return nil
}

func nodeText(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// flattenCells replaces line breaks in table cells with spaces, so that
// tables whose cells wrap text with <br> still convert to markdown tables,
// and escapes "|" in cell text.
func flattenCells(root *html.Node) {
	var walk func(n *html.Node, inCell bool)
	walk = func(n *html.Node, inCell bool) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.Data {
			case "td", "th":
				escapePipes(c)
				walk(c, true)
				continue
			case "br":
				if inCell {
					c.Type, c.Data = html.TextNode, " "
					continue
				}
			}
			if inCell {
				escapePipes(c)
			}
			walk(c, inCell)
		}
	}
	walk(root, false)
}

// escapePipes escapes "|" in the text children of a table cell element, so
// it does not end the markdown cell.
func escapePipes(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode && strings.Contains(c.Data, "|") {
			c.Data = strings.ReplaceAll(c.Data, "|", "\\|")
		}
	}
}

func collapseSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func firstMarkdownHeading(md string) string {
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "# ") {
			return strings.TrimSpace(line[2:])
		}
	}
	return ""
}

// tidy turns no-break spaces into spaces, trims trailing spaces and limits blank-line runs to one, keeping the
// block structure the chunker splits on.
func tidy(md string) string {
	var b strings.Builder
	b.Grow(len(md))
	blank := 0
	for _, l := range strings.Split(strings.TrimSpace(md), "\n") {
		// No-break spaces (CourseLeaf writes "ECON&#160;1") become spaces, so
		// course codes tokenise and match like typed text.
		l = strings.TrimRight(strings.ReplaceAll(l, "\u00a0", " "), " \t")
		if strings.HasPrefix(l, "|") {
			l = strings.ReplaceAll(l, "<br />", " ")
		}
		if l == "" {
			blank++
			if blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if b.Len() == 1 {
		return ""
	}
	return b.String()
}
