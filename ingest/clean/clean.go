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

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"
	"github.com/ragproxy/ragproxy/index"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Version is the version of the cleaner's output. Ingest keeps a page's markdown while its body and settings are
// unchanged, so a change to what the cleaner makes of the same page must raise Version: every page is then
// cleaned again by the next ingest.
const Version = 6

// Doc is a cleaned page.
type Doc struct {
	// Title is the page's <title> (or first h1) without the site's suffix.
	Title string
	// Markdown is the main content: headings as "#" lines, paragraphs and
	// blocks separated by a blank line, list items on their own lines, tables
	// as markdown tables, links absolute.
	Markdown string
	// Lang is the language tag the markup declares (<html lang>, else <meta http-equiv="content-language">),
	// as written; "" when it declares none.
	Lang string
	// Alternates are the page's versions in other languages (<link rel="alternate" hreflang>), the page itself
	// among them when it names itself.
	Alternates []Alternate
	// Anchors are the ids that address the page's sections, by their headings (see markAnchors).
	Anchors []index.Anchor
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
	return []string{"main", "[role=main]", "article", "#content", "#main", "#main-content", ".main-content", "#doc-content",
		".content"}
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
// Relative links are resolved against pageURL, or against the page's <base href>.
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
	base := documentBase(root, pageURL)
	lang, alts := markupLanguage(root, base)
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
		titleHeadings(r)
		markAnchors(r) // before unwrapAnchors, which takes the <a id> and <a name> some pages name sections by
		unwrapAnchors(r)
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
		md, err := convertNode(conv, r, base)
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
	// The anchors are read off the tidied text, whose headings are those the page's markdown keeps.
	md, anchors := takeAnchors(tidy(out.String()))
	if title == "" {
		text, _ := takeAnchors(out.String())
		title = firstMarkdownHeading(text)
	}
	return Doc{Title: manualTitle(title, md), Markdown: md, Lang: lang, Alternates: alts, Anchors: anchors}, nil
}

// documentBase is the URL the page's relative links resolve against, its document base URL in the HTML
// standard's terms: the href of its first <base> element that has one, resolved against pageURL, else pageURL.
// The LibreOffice Help's pages, for one, sit four folders deep and link from the help's root
// (<base href="../../../../">, then href="de/text/swriter/02/03210000.html").
func documentBase(root *html.Node, pageURL string) string {
	var href string
	var walk func(n *html.Node, depth int) bool
	walk = func(n *html.Node, depth int) bool {
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Base:
				if hasAttr(n, "href") {
					href = strings.TrimSpace(attr(n, "href"))
					return true
				}
			case atom.Body:
				return false
			}
		}
		if depth > 3 {
			return false
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if walk(c, depth+1) {
				return true
			}
		}
		return false
	}
	if !walk(root, 0) {
		return pageURL
	}
	page, err := url.Parse(pageURL)
	if err != nil {
		return pageURL
	}
	b, err := page.Parse(href)
	if err != nil || (b.Scheme != "http" && b.Scheme != "https") {
		return pageURL
	}
	return b.String()
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
				if head := titleBefore(nodes[0]); head != nil {
					return []*html.Node{head, nodes[0]}
				}
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

// titleBefore is the element just before main, the page's main content, when it holds the page's title heading
// that main lacks and a line about it: an <h1> and more in a short block of plain text, no navigation, no links. AsciiDoc's manual pages put
// "git-commit(1) Manual Page" and their NAME line, "git-commit - Record changes to the repository", in a
// header beside the content; without it a page lost the one sentence that says what it is about. A site's
// banner, whose heading is its name, links home and holds its navigation, and is left out.
func titleBefore(main *html.Node) *html.Node {
	prev := prevElement(main)
	if prev == nil || find(main, atom.H1) || !find(prev, atom.H1) || find(prev, atom.A) || find(prev, atom.Nav) ||
		find(prev, atom.Form) || len(nodeText(prev)) > titleBlockBytes {
		return nil
	}
	// A heading alone is a banner's as often as a page's (and <title> names the page): the block must say more.
	if strings.TrimSpace(textWithout(prev, func(n *html.Node) bool { return n.DataAtom == atom.H1 })) == "" {
		return nil
	}
	return prev
}

// titleBlockBytes bounds the text of the block titleBefore takes with the main content: a title and a line or two.
const titleBlockBytes = 600

// find reports whether n has a descendant element a.
func find(n *html.Node, a atom.Atom) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && (c.DataAtom == a || find(c, a)) {
			return true
		}
	}
	return false
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
	return textWithout(h, func(c *html.Node) bool {
		return c.Type == html.ElementNode && c.DataAtom == atom.A && strings.Contains(attr(c, "href"), "#") && permalinkText(c)
	})
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

// titleHeadings makes a page title written as a plain block a heading: Doxygen writes its pages' titles as
// <div class="headertitle"><div class="title">, which read as a paragraph and left the page without its "#"
// line, the heading that retrieval reads a page's subject from.
func titleHeadings(root *html.Node) {
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			if c.DataAtom == atom.Div && hasClass(c, "title") && n.Type == html.ElementNode && hasClass(n, "headertitle") {
				c.DataAtom, c.Data = atom.H1, "h1"
				continue
			}
			walk(c)
		}
	}
	walk(root)
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
		if isHeading(c) {
			return c
		}
		if h := firstHeading(c); h != nil {
			return h
		}
	}
	return nil
}

// nodeText is the text under n.
func nodeText(n *html.Node) string { return textWithout(n, nil) }

// textWithout is the text under n, leaving out the elements (and what they hold) for which skip, when not nil,
// reports true.
func textWithout(n *html.Node, skip func(*html.Node) bool) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if skip == nil || !skip(c) {
				walk(c)
			}
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
	return strings.Join(strings.Fields(invisible.Replace(s)), " ")
}

// invisible drops the characters that only say where a line may break or two letters join: soft hyphens
// (CourseLeaf writes "examin&shy;ations"), zero-width spaces, word joiners and byte-order marks. Left in, they
// cut a word in two for search and hide the word from a reader's search of the context.
var invisible = strings.NewReplacer("\u00ad", "", "\u200b", "", "\u2060", "", "\ufeff", "")

func firstMarkdownHeading(md string) string {
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "# ") {
			return strings.TrimSpace(line[2:])
		}
	}
	return ""
}

// tidy turns no-break spaces into spaces, drops invisible characters, trims trailing spaces and limits blank-line runs to one, keeping the
// block structure the chunker splits on.
func tidy(md string) string {
	var b strings.Builder
	b.Grow(len(md))
	blank := 0
	for _, l := range strings.Split(strings.TrimSpace(md), "\n") {
		// No-break spaces (CourseLeaf writes "ECON&#160;1") become spaces, so
		// course codes tokenise and match like typed text.
		l = strings.TrimRight(strings.ReplaceAll(invisible.Replace(l), "\u00a0", " "), " \t")
		if strings.HasPrefix(strings.TrimLeft(l, "> "), "|") { // a table row, also in a block quote
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
