package clean

import (
	"strings"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/markdown"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Section anchors. A link to a page's section ("page.html#sect.apt-file") opens the page where the quoted words
// stand, in every browser, and is where a text fragment falls back to when its words are not found. Site
// generators name a section in one of a few ways, each found here: an id on the heading (asciidoc, Hugo,
// Jekyll, Python-Markdown's toc), on an element inside it (Publican's <a id>), on the section that the heading
// opens (Sphinx's <section id>, the DocBook XSL stylesheets' <div class="sect1" id> around a title page), in a
// permalink inside it (<a class="headerlink" href="#id">), or on an empty anchor just before it
// (CourseLeaf's <a name>).

// Marks around a heading's id while the page is converted: private-use characters, which no page writes and
// the converter passes through, so the id rides on its heading's line and is read off it afterwards.
const (
	anchorOpen  = "\ue000"
	anchorClose = "\ue001"
)

// maxAnchorID bounds an id taken as a section's: longer ones are generated keys, not names.
const maxAnchorID = 200

// markAnchors appends to each heading (h1-h6) under root that a fragment can address its id between the marks.
func markAnchors(root *html.Node) {
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			if isHeading(c) {
				// A heading without text is no section's title: the converter leaves it out, and its mark with it.
				if id := headingID(c, root); id != "" && hasText(c) {
					c.AppendChild(&html.Node{Type: html.TextNode, Data: " " + anchorOpen + id + anchorClose})
				}
				continue
			}
			walk(c)
		}
	}
	walk(root)
}

// headingID is the id that addresses heading h's section (see the package's notes on anchors), "" when none does.
// root bounds the sections looked at: an id on it or above it names the page's content, not a section.
func headingID(h, root *html.Node) string {
	if id := anchorID(attr(h, "id")); id != "" {
		return id
	}
	if id := innerID(h); id != "" {
		return id
	}
	if p := prevElement(h); p != nil && p.DataAtom == atom.A && p.FirstChild == nil {
		if id := anchorID(attr(p, "id")); id != "" {
			return id
		}
		if name := anchorID(attr(p, "name")); name != "" {
			return name
		}
	}
	for n := h; n.Parent != nil && n.Parent != root && n == firstElement(n.Parent); n = n.Parent {
		if id := anchorID(attr(n.Parent, "id")); id != "" {
			return id
		}
	}
	return ""
}

// innerID is the id of an element inside heading h, a named anchor's name, or the fragment of a link to the page
// itself (a permalink), the first found.
func innerID(h *html.Node) string {
	for c := h.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if id := anchorID(attr(c, "id")); id != "" {
			return id
		}
		if c.DataAtom == atom.A {
			if name := anchorID(attr(c, "name")); name != "" {
				return name
			}
			if href := attr(c, "href"); strings.HasPrefix(href, "#") {
				if id := anchorID(href[1:]); id != "" {
					return id
				}
			}
		}
		if id := innerID(c); id != "" {
			return id
		}
	}
	return ""
}

// firstElement is n's first element child, nil when it has none or text comes before it (it does not open n).
func firstElement(n *html.Node) *html.Node {
	c := n.FirstChild
	if c == nil || c.Type == html.ElementNode {
		return c
	}
	if c.Type == html.TextNode && strings.TrimSpace(c.Data) != "" {
		return nil
	}
	return adjacentElement(c, func(p *html.Node) *html.Node { return p.NextSibling })
}

// anchorID is id trimmed, or "" when it cannot be a section's: empty, too long, or holding spaces or the marks.
func anchorID(id string) string {
	id = strings.TrimSpace(id)
	if id == "" || len(id) > maxAnchorID || strings.ContainsAny(id, " \t\n\r\f"+anchorOpen+anchorClose) {
		return ""
	}
	return id
}

// takeAnchors removes the marks markAnchors left in md, returning md without them and the anchors of its
// headings, in page order: a heading's id once, and no anchor for a heading text that the page gives two ids
// (an answer knows its section by its heading alone).
func takeAnchors(md string) (string, []index.Anchor) {
	if !strings.Contains(md, anchorOpen) {
		return md, nil
	}
	var b strings.Builder
	b.Grow(len(md))
	var out []index.Anchor
	ids := map[string]string{}
	fenced := false
	for line := range strings.Lines(md) {
		heading := markdown.HeadingOutsideFence(strings.TrimSpace(line), &fenced) > 0
		var id string
		for {
			i := strings.Index(line, anchorOpen)
			if i < 0 {
				break
			}
			j := strings.Index(line[i:], anchorClose)
			if j < 0 {
				line = line[:i] + line[i+len(anchorOpen):]
				continue
			}
			if id == "" {
				id = line[i+len(anchorOpen) : i+j]
			}
			line = strings.TrimRight(line[:i], " \t") + line[i+j+len(anchorClose):]
		}
		b.WriteString(line)
		if !heading || id == "" {
			continue
		}
		for _, text := range markdown.Headings(line) {
			if prev, seen := ids[text]; seen {
				if prev != id {
					ids[text] = "" // two sections of one heading: neither is told by it
				}
				continue
			}
			ids[text] = id
			out = append(out, index.Anchor{Heading: text, ID: id})
		}
	}
	kept := out[:0]
	for _, a := range out {
		if ids[a.Heading] != "" && a.Heading != "" {
			kept = append(kept, a)
		}
	}
	return b.String(), kept
}
