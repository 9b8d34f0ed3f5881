package clean

import (
	"github.com/JohannesKaufmann/dom"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// pruneSpace removes the whitespace-only text nodes under root whose removal cannot change the markdown: those
// the converter's whitespace collapsing (collapse.Collapse, a port of turndown's) drops or empties anyway. A
// fifth of the nodes of a typical page are such indentation between blocks, and the converter pays for each
// node in every one of its passes.
//
// A whitespace-only text node between two non-text siblings goes when it is the first child of a block element
// (collapsing strips a block's leading space), or when the next thing in document order, skipping other such
// nodes, is the start of a block element or a <br> or the end of root (collapsing trims the space there). Text
// inside <pre> and <code> is never touched: the converter keeps it verbatim.
func pruneSpace(root *html.Node) {
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			switch c.Type {
			case html.ElementNode:
				if !keepsSpace(c.Data) {
					walk(c)
				}
			case html.TextNode:
				if removableSpace(c, root) {
					n.RemoveChild(c)
				}
			}
			c = next
		}
	}
	walk(root)
}

// removableSpace reports whether the text node n under root is whitespace that pruneSpace may remove. It is called on the
// children of a node in order, so earlier removable siblings are gone already.
func removableSpace(n, root *html.Node) bool {
	if !collapsibleSpace(n.Data) || isText(n.PrevSibling) || isText(n.NextSibling) {
		return false
	}
	if n.PrevSibling == nil && n.Parent.Type == html.ElementNode && dom.NameIsBlockNode(n.Parent.Data) {
		return true
	}
	next := nextContent(n, root)
	return next == nil || next.Type == html.ElementNode && (next.Data == "br" || dom.NameIsBlockNode(next.Data))
}

// nextContent returns the first element or non-whitespace text after n in document order, without leaving root
// (comments and whitespace-only text are skipped), or nil at the end of what is converted.
func nextContent(n, root *html.Node) *html.Node {
	for at := n; at != root; at = at.Parent {
		for s := at.NextSibling; s != nil; s = s.NextSibling {
			switch s.Type {
			case html.TextNode:
				if !collapsibleSpace(s.Data) {
					return s
				}
			case html.ElementNode:
				return s
			}
		}
	}
	return nil
}

// collapsibleSpace reports whether s is made of the characters the converter collapses as whitespace only.
func collapsibleSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
		default:
			return false
		}
	}
	return true
}

func isText(n *html.Node) bool { return n != nil && n.Type == html.TextNode }

// keepsSpace reports whether pruneSpace leaves the text under an element alone: <pre> and <code> keep it verbatim,
// and inside inline elements and headings the converter's commonmark pass turns blocks into inline alternatives
// (a heading in a link becomes bold text), so what is a block boundary there is only known after it ran.
func keepsSpace(tag string) bool {
	switch tag {
	case "pre", "code", "span", "a", "b", "strong", "i", "em", "img", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6":
		return true
	}
	return false
}

// unwrapAnchors replaces each <a> under root that links nowhere (no href) with its children. Such an anchor only
// names a place in the page, and a reader sees its text as plain text; converted, it became a link to the page
// itself around its text. Worse, XHTML pages write empty anchors as <a id="x"/>, which an HTML parser (and a
// browser reading the page as text/html) takes as an anchor left open: it then holds the rest of its section,
// reopened in every following block, and each paragraph, list and table became one link, its blocks run
// together (DocBook's output, the Debian Reference for one, writes one before every heading).
func unwrapAnchors(root *html.Node) {
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			if c.Type == html.ElementNode {
				walk(c)
				if c.DataAtom == atom.A && !hasAttr(c, "href") {
					unwrap(c)
				}
			}
			c = next
		}
	}
	walk(root)
}

func hasAttr(n *html.Node, key string) bool {
	for _, a := range n.Attr {
		if a.Key == key && a.Namespace == "" {
			return true
		}
	}
	return false
}
