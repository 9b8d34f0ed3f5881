package faqmarkup

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Separators a textWriter owes before its next word, weakest first.
const (
	sepNone = iota
	sepSpace
	sepLine
	sepParagraph
)

// textWriter renders HTML as whitespace-normalised text: paragraphs and other blocks separated by a blank
// line, list items on lines of their own as "- item", line breaks, table rows and the lines of preformatted
// text as new lines, runs of other white space as one space. In inline mode (for questions) every break is a
// space. It also counts the text inside links to other pages, so callers can tell a menu from an answer.
type textWriter struct {
	b       strings.Builder
	inline  bool
	pending int    // separator owed before the next word
	prefix  string // list marker owed before the next word
	limit   int    // bytes after which nothing more is written; 0 for none
	pre     int    // depth of <pre> elements around the current node
	lists   int    // depth of <ul> and <ol> elements around the current node

	inLink          int // depth of links to other pages around the current node
	links           int // links to other pages rendered
	chars, linkText int // bytes of words written, and of those inside links
}

func (w *textWriter) full() bool { return w.limit > 0 && w.b.Len() >= w.limit }

// brk owes a separator of at least strength k. A list marker not yet written absorbs breaks, so that
// "<li><p>x</p></li>" reads "- x".
func (w *textWriter) brk(k int) {
	if w.inline && k > sepSpace {
		k = sepSpace
	}
	if w.prefix == "" && k > w.pending {
		w.pending = k
	}
}

func (w *textWriter) word(s string) {
	if w.b.Len() > 0 {
		switch w.pending {
		case sepSpace:
			w.b.WriteByte(' ')
		case sepLine:
			w.b.WriteByte('\n')
		case sepParagraph:
			w.b.WriteString("\n\n")
		}
	}
	w.b.WriteString(w.prefix)
	w.b.WriteString(s)
	w.prefix, w.pending = "", sepNone
	w.chars += len(s)
	if w.inLink > 0 {
		w.linkText += len(s)
	}
}

// text writes a text node's words. Inside <pre> its line breaks are kept.
func (w *textWriter) text(s string) {
	if w.pre > 0 && !w.inline && strings.Contains(s, "\n") {
		for i, line := range strings.Split(s, "\n") {
			if i > 0 {
				w.brk(sepLine)
			}
			w.words(line)
		}
		return
	}
	w.words(s)
}

func (w *textWriter) words(s string) {
	words := strings.Fields(s)
	if len(words) == 0 {
		if s != "" {
			w.brk(sepSpace)
		}
		return
	}
	if r, _ := utf8.DecodeRuneInString(s); unicode.IsSpace(r) {
		w.brk(sepSpace)
	}
	for i, wd := range words {
		if i > 0 {
			w.brk(sepSpace)
		}
		w.word(wd)
	}
	if r, _ := utf8.DecodeLastRuneInString(s); unicode.IsSpace(r) {
		w.brk(sepSpace)
	}
}

// node renders n and its descendants.
func (w *textWriter) node(n *html.Node) {
	if w.full() {
		return
	}
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
	case html.ElementNode:
		if w.skip(n) {
			return
		}
		w.open(n)
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			w.node(c)
		}
		w.close(n)
	case html.DocumentNode:
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			w.node(c)
		}
	}
}

// skip reports whether an element is left out of the text: code and media that carry no prose, form
// controls, and site chrome.
func (w *textWriter) skip(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Math, atom.Iframe, atom.Object,
		atom.Embed, atom.Canvas, atom.Head, atom.Select, atom.Input, atom.Textarea:
		return true
	case atom.Button:
		// Answers carry "Copy" and "Show more" buttons; questions are often a button in a heading
		// (Bootstrap's accordion).
		return !w.inline
	}
	return isChrome(n)
}

func (w *textWriter) open(n *html.Node) {
	switch n.DataAtom {
	case atom.Li:
		w.brk(sepLine)
		if !w.inline {
			w.prefix = "- "
		}
	case atom.Br, atom.Tr, atom.Dt, atom.Dd:
		w.brk(sepLine)
	case atom.Td, atom.Th:
		w.brk(sepSpace)
	case atom.A:
		if isPageLink(n) {
			w.inLink++
			w.links++
		}
	case atom.Pre:
		w.pre++
		w.brk(sepParagraph)
	case atom.Ul, atom.Ol:
		// A list inside a list item goes on at the next line.
		if w.lists > 0 {
			w.brk(sepLine)
		} else {
			w.brk(sepParagraph)
		}
		w.lists++
	default:
		if isBlock(n.DataAtom) {
			w.brk(sepParagraph)
		}
	}
}

func (w *textWriter) close(n *html.Node) {
	switch n.DataAtom {
	case atom.Li:
		w.prefix = "" // an empty item leaves no marker for the text after it
		w.brk(sepLine)
	case atom.Tr, atom.Dt, atom.Dd:
		w.brk(sepLine)
	case atom.Td, atom.Th:
		w.brk(sepSpace)
	case atom.A:
		if isPageLink(n) {
			w.inLink--
		}
	case atom.Pre:
		w.pre--
		w.brk(sepParagraph)
	case atom.Ul, atom.Ol:
		w.lists--
		if w.lists > 0 {
			w.brk(sepLine)
		} else {
			w.brk(sepParagraph)
		}
	default:
		if isBlock(n.DataAtom) {
			w.brk(sepParagraph)
		}
	}
}

// String returns the text written so far.
func (w *textWriter) String() string { return strings.TrimSpace(w.b.String()) }

// menuLike reports whether the text written reads as a menu rather than an answer: three or more links to
// other pages and nine tenths of the words inside them.
func (w *textWriter) menuLike() bool {
	return w.links >= 3 && w.linkText*10 >= w.chars*9
}

// linkOnly reports whether all the text written is inside links to other pages: a question that is a link is a
// teaser for an answer elsewhere.
func (w *textWriter) linkOnly() bool { return w.chars > 0 && w.linkText == w.chars }

func isBlock(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Section, atom.Article, atom.Main, atom.Blockquote, atom.Pre, atom.Ul, atom.Ol,
		atom.Dl, atom.Table, atom.Caption, atom.Thead, atom.Tbody, atom.Tfoot, atom.H1, atom.H2, atom.H3, atom.H4,
		atom.H5, atom.H6, atom.Hr, atom.Figure, atom.Figcaption, atom.Details, atom.Summary, atom.Address,
		atom.Fieldset, atom.Form, atom.Header, atom.Footer, atom.Center, atom.Hgroup:
		return true
	}
	return false
}

// isPageLink reports whether n is a link to another document: a fragment link ("#top", a heading's
// permalink) stays on the page.
func isPageLink(n *html.Node) bool {
	href, ok := attr(n, "href")
	return ok && !strings.HasPrefix(strings.TrimSpace(href), "#")
}

// inlineText returns the text of n on one line, buttons included.
func inlineText(n *html.Node) (string, *textWriter) {
	w := &textWriter{inline: true, limit: 4 * maxQuestionBytes}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.node(c)
	}
	return w.String(), w
}

// htmlText renders a string that may hold HTML, as JSON-LD answers do. Text without markup keeps its blank
// lines as paragraph breaks.
func htmlText(s string, inline bool) string {
	if !strings.ContainsAny(s, "<&") {
		w := &textWriter{inline: inline}
		for i, para := range strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n\n") {
			if i > 0 {
				w.brk(sepParagraph)
			}
			w.text(para)
		}
		return w.String()
	}
	nodes, err := html.ParseFragment(strings.NewReader(s), &html.Node{Type: html.ElementNode, Data: "body",
		DataAtom: atom.Body})
	if err != nil {
		return ""
	}
	w := &textWriter{inline: inline}
	for _, n := range nodes {
		w.node(n)
	}
	return w.String()
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return a.Val, true
		}
	}
	return "", false
}
