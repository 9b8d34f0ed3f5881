package faqmarkup

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// question returns the cleaned one-line text of el when it reads as a question and is not a link to another
// page (a teaser for an answer elsewhere).
func question(el *html.Node) (string, bool) {
	s, w := inlineText(el)
	s = cleanQuestion(s)
	if w.linkOnly() || !readsAsQuestion(s) {
		return "", false
	}
	return s, true
}

// details adds a <details> element whose summary (its first <summary> child, HTML Living Standard, "the
// details element") is a question, with the rest of its content as the answer. Details used as menus or "show
// more" toggles have summaries that are not questions, or content that is mostly links. It reports whether
// the element holds an entry.
func (x *extractor) details(d *html.Node, pos int) bool {
	var summary *html.Node
	for c := d.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.DataAtom == atom.Summary {
			summary = c
			break
		}
	}
	if summary == nil {
		return false
	}
	q, ok := question(summary)
	if !ok {
		return false
	}
	w := &textWriter{}
	for c := d.FirstChild; c != nil; c = c.NextSibling {
		if c != summary {
			w.node(c)
		}
	}
	if w.menuLike() {
		return false
	}
	return x.add(Entry{Question: q, Answer: w.String(), URL: x.entryURL(fragment(summary, d)), Source: SourceDetails}, pos)
}

// dlGroup is one name-value group of a <dl>: one or more <dt> followed by one or more <dd>.
type dlGroup struct{ dts, dds []*html.Node }

// dl adds the question terms of a <dl> that reads as a list of questions and answers: at least half of its
// terms are questions, so a glossary with a stray question mark is not one. A group's description is the
// answer; when a group has several question terms (HTML Living Standard, "the dl element": several names
// for one value), the first is the question and the others its alternatives. It reports whether the list
// holds an entry.
func (x *extractor) dl(n *html.Node, pos int) bool {
	var groups []dlGroup
	var items func(*html.Node)
	items = func(p *html.Node) {
		for c := p.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.DataAtom {
			case atom.Dt:
				if len(groups) == 0 || len(groups[len(groups)-1].dds) > 0 {
					groups = append(groups, dlGroup{})
				}
				g := &groups[len(groups)-1]
				g.dts = append(g.dts, c)
			case atom.Dd:
				if len(groups) > 0 {
					g := &groups[len(groups)-1]
					g.dds = append(g.dds, c)
				}
			case atom.Div:
				// The spec lets a <div> wrap each group (and script-supporting elements).
				if p == n {
					items(c)
				}
			}
		}
	}
	items(n)
	type qa struct {
		qs    []string
		frag  string
		group dlGroup
	}
	var found []qa
	terms, questions := 0, 0
	for _, g := range groups {
		var f qa
		for _, dt := range g.dts {
			terms++
			q, ok := question(dt)
			if !ok {
				continue
			}
			questions++
			if len(f.qs) == 0 {
				f.frag = fragment(dt)
			}
			f.qs = append(f.qs, q)
		}
		if len(f.qs) > 0 && len(g.dds) > 0 {
			if f.frag == "" && g.dts[0].Parent != n {
				f.frag = nodeID(g.dts[0].Parent) // the group's <div>
			}
			f.group = g
			found = append(found, f)
		}
	}
	if questions == 0 || 2*questions < terms {
		return false
	}
	added := false
	for _, f := range found {
		w := &textWriter{}
		for _, dd := range f.group.dds {
			w.brk(sepParagraph)
			for c := dd.FirstChild; c != nil; c = c.NextSibling {
				w.node(c)
			}
		}
		if w.menuLike() {
			continue
		}
		var alts []string
		seen := map[string]bool{questionKey(f.qs[0]): true}
		for _, q := range f.qs[1:] {
			if k := questionKey(q); !seen[k] {
				seen[k] = true
				alts = append(alts, q)
			}
		}
		if x.add(Entry{Question: f.qs[0], Answer: w.String(), URL: x.entryURL(f.frag), Alternatives: alts,
			Source: SourceDL}, pos) {
			added = true
		}
	}
	return added
}

// headingEntries adds the question headings that stand in an FAQ context, each with the content after it (for
// a bold run-in question, the rest of its paragraph or list item first).
//
// A question heading counts only in an FAQ context: the page's title, an h1 or its URL says FAQ
// (extractor.pageFAQ), one of the headings of the sections enclosing it says FAQ (faqSections), or the heading
// or an element around it says so (faqElement). Outside such a context, question headings are rhetorical more
// often than not: blog posts ("What happened?") and interviews ("Where do you live?").
func (x *extractor) headingEntries() {
	inFAQ := x.faqSections()
	for i, h := range x.headings {
		if h.level < 2 || h.qa {
			continue
		}
		head := h.n
		if h.bold != nil {
			head = h.bold
		}
		q, ok := question(head)
		if !ok || !(x.pageFAQ || inFAQ[i] || faqElement(h.n)) {
			continue
		}
		w := &textWriter{limit: 2 * MaxHeadingAnswer}
		if h.runIn {
			for c := h.bold.NextSibling; c != nil; c = c.NextSibling {
				w.node(c)
			}
		}
		if !h.runIn || h.n.DataAtom == atom.P {
			// A list item's run-in answer ends with the item; a paragraph's may go on in the paragraphs after.
			x.following(w, h.n, h.level)
		}
		if w.menuLike() {
			continue
		}
		elems := []*html.Node{h.n}
		if head != h.n {
			elems = append(elems, head)
		}
		x.add(Entry{Question: q, Answer: cutAnswer(w.String(), MaxHeadingAnswer), URL: x.entryURL(fragment(elems...)),
			Source: SourceHeading}, h.pos)
	}
}

// faqSections reports for each heading whether a heading of a section enclosing it (a preceding heading of a
// higher level, and so on up) says FAQ: "Billing" under "Frequently asked questions" is in one.
func (x *extractor) faqSections() []bool {
	type section struct {
		level int
		faq   bool // this heading or an enclosing one says FAQ
	}
	var open []section
	in := make([]bool, len(x.headings))
	for i, h := range x.headings {
		for len(open) > 0 && open[len(open)-1].level >= h.level {
			open = open[:len(open)-1]
		}
		outer := len(open) > 0 && open[len(open)-1].faq
		in[i] = outer
		open = append(open, section{h.level, outer || isFAQTitle(h.text)})
	}
	return in
}

// faqElement reports whether n or an element around it has an id or class that says faq, or is schema.org
// FAQPage microdata.
func faqElement(n *html.Node) bool {
	for p := n; p != nil; p = p.Parent {
		if p.Type != html.ElementNode {
			continue
		}
		for _, a := range p.Attr {
			switch a.Key {
			case "id", "class":
				if strings.Contains(strings.ToLower(a.Val), "faq") {
					return true
				}
			case "itemtype":
				if strings.Contains(a.Val, "FAQPage") {
					return true
				}
			}
		}
	}
	return false
}

// maxClimb bounds how many enclosing elements a heading's answer is looked for after, when nothing follows
// the heading in its own parent ("<div class="q"><h3>...</h3></div><div class="a">...</div>").
const maxClimb = 3

// following writes the content after heading h up to the next heading of level at most level, an <hr>, a
// details or dl element with questions of its own, or the end of h's parent. Only when nothing with text has
// been written by then does the answer continue after the parent, up to maxClimb levels up; it never continues
// past the end of a parent that held content, so a page's last question does not take in what follows the FAQ.
func (x *extractor) following(w *textWriter, h *html.Node, level int) {
	n := h
	for climb := 0; climb <= maxClimb && n != nil; climb++ {
		for s := n.NextSibling; s != nil; s = s.NextSibling {
			if x.until(w, s, level) {
				return
			}
		}
		if w.chars > 0 {
			return
		}
		n = n.Parent
		if n == nil || n.Type != html.ElementNode || n.DataAtom == atom.Body || n.DataAtom == atom.Main ||
			n.DataAtom == atom.Article || isChrome(n) {
			return
		}
	}
}

// until writes n, stopping before the first heading of level at most level (or <hr>, or details or dl with
// entries) in it; it reports whether it stopped.
func (x *extractor) until(w *textWriter, n *html.Node, level int) bool {
	if w.full() {
		return true
	}
	stop, ok := x.stops[n]
	if !ok || stop > level {
		w.node(n)
		return false
	}
	if _, isHeading := headingLevel(n); isHeading || n.DataAtom == atom.Hr || x.qaBlocks[n] {
		return true
	}
	if w.skip(n) {
		return false
	}
	w.open(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if x.until(w, c, level) {
			return true
		}
	}
	w.close(n)
	return false
}
