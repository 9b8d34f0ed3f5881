// Package faqmarkup finds the questions and answers a web page marks up itself, so that ingest can keep them as FAQ
// entries next to the operator's own. It reads four kinds of markup:
//
//   - schema.org FAQPage structured data in JSON-LD (https://schema.org/FAQPage): every
//     <script type="application/ld+json"> block, its Questions' name and acceptedAnswer text;
//   - <details> elements whose <summary> is a question (HTML Living Standard, "the details element");
//   - <dl> lists whose terms are questions and whose descriptions answer them (HTML Living Standard, "the dl
//     element");
//   - question headings inside a section the page calls its FAQ: h2 to h6, with the content up to the next
//     heading of the same or a higher level as the answer, and paragraphs that are only bold text or open
//     with a bold question ("<p><b>Is it free?</b> Yes.</p>"), answered up to the next such paragraph.
//
// An entry may answer a visitor directly, without a model, so the rules favour precision over recall: a
// heading, summary or term must read as a question, question headings count only where the page, the
// section or an enclosing element says FAQ, glossaries and menus are not taken for answers, and navigation,
// page headers, footers and sidebars are ignored.
//
// Extract keeps no state between calls and is safe for concurrent use.
package faqmarkup

import (
	"bytes"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// The kinds of markup an entry comes from (Entry.Source).
const (
	SourceJSONLD  = "jsonld"  // schema.org FAQPage structured data
	SourceDetails = "details" // a <details> element whose summary is a question
	SourceDL      = "dl"      // a <dt> question and its <dd> answer
	SourceHeading = "heading" // a question heading and the content after it
)

// MaxHeadingAnswer bounds the answer taken after a question heading, in bytes: the markup does not say where
// that answer ends, so a long run of content is cut at the last sentence that fits. Answers of the other
// kinds are delimited by their markup and kept whole.
const MaxHeadingAnswer = 1500

// Entry is one question with its answer.
type Entry struct {
	// Question is the question as the page words it, on one line, without a "Q:" label or a permalink sign.
	Question string `json:"question"`
	// Answer is plain text, whitespace-normalised: paragraphs separated by a blank line, list items on lines
	// of their own as "- item".
	Answer string `json:"answer"`
	// URL is the page's URL, with a fragment when the question, or the element holding it, has an id.
	URL string `json:"url"`
	// Alternatives are other phrasings of the question: the further question terms of a <dl> group that
	// shares one answer. Usually empty.
	Alternatives []string `json:"alternatives,omitempty"`
	// Source is the kind of markup the entry comes from: SourceJSONLD, SourceDetails, SourceDL or
	// SourceHeading.
	Source string `json:"source"`
}

// Extract returns the FAQ entries marked up in one HTML page, in document order, one per question: questions
// that differ only in case, punctuation and spacing are the same question. pageURL is the page's address; it
// is the URL of the entries, with a fragment added where the markup has an id.
//
// When the same question is marked up twice (FAQPage data and visible markup, say), the entry whose markup
// delimits the answer is kept (JSON-LD, details or dl, the first of those in document order) over one from a
// heading, whose end is inferred; it takes the other's fragment if it has none, and stays at the position of
// the first occurrence.
//
// A page without entries yields nil. Malformed markup, JSON-LD included, yields fewer entries, not an error;
// the errors are for a pageURL that does not parse and for a page the HTML parser refuses (golang.org/x/net/html
// stops at elements nested more than 512 deep).
func Extract(page []byte, pageURL string) ([]Entry, error) {
	return extract(page, pageURL, func() (*html.Node, error) { return html.Parse(bytes.NewReader(page)) })
}

// ExtractTree is Extract for a caller that has parsed the page already (root is html.Parse's result for page,
// which is still needed for a quick look at the source): it only reads the tree, so the same tree can go on to
// be cleaned afterwards.
func ExtractTree(root *html.Node, page []byte, pageURL string) ([]Entry, error) {
	return extract(page, pageURL, func() (*html.Node, error) { return root, nil })
}

func extract(page []byte, pageURL string, parse func() (*html.Node, error)) ([]Entry, error) {
	base, err := url.Parse(pageURL)
	if err != nil {
		return nil, fmt.Errorf("faq: page url: %w", err)
	}
	base.Fragment, base.RawFragment = "", ""
	if !mayHaveFAQ(page, base.Path) {
		return nil, nil
	}
	root, err := parse()
	if err != nil {
		return nil, fmt.Errorf("faq: parse html: %w", err)
	}
	doc := goquery.NewDocumentFromNode(root)
	x := &extractor{base: base, stops: map[*html.Node]int{}, qaBlocks: map[*html.Node]bool{}, seen: map[string]int{}}
	x.pageFAQ = isFAQTitle(doc.Find("title").First().Text()) || hasFAQToken(base.Path)
	for _, root := range doc.Nodes {
		x.walk(root, false, false)
	}
	x.headingEntries()
	return x.result(), nil
}

// faqHint finds, in a page's lowercased source, the forms of faqTitle as the source may write them, entities
// included; mayHaveFAQ runs it only around the words it needs.
var faqHint = regexp.MustCompile(`common(?:ly asked)?\s+questions|questions\s+(?:and|&|&amp;|&#38;)\s+answers|` +
	`\bq\s*(?:&|&amp;|&#38;|and)\s*a\b`)

// mayHaveFAQ reports whether a page can hold entries at all: every kind needs FAQ words somewhere in the page
// (in text, an id, a class, FAQPage JSON-LD or microdata) or details or dl markup. Most pages have none, and
// looking for them costs a small part of parsing the page.
func mayHaveFAQ(page []byte, path string) bool {
	if hasFAQToken(path) {
		return true
	}
	lower := bytes.ToLower(page)
	for _, s := range []string{"faq", "frequently", "<details", "<dt"} {
		if bytes.Contains(lower, []byte(s)) {
			return true
		}
	}
	// The rest of faqTitle's forms hold "questions" or a "q" before "&" or "and": look only around those.
	for _, anchor := range []string{"questions", "q&", "q &", "q and"} {
		for rest, off := lower, 0; ; {
			i := bytes.Index(rest, []byte(anchor))
			if i < 0 {
				break
			}
			at := off + i
			if faqHint.Match(lower[max(0, at-24):min(len(lower), at+40)]) {
				return true
			}
			off = at + len(anchor)
			rest = lower[off:]
		}
	}
	return false
}

// candidate is an entry with where it was found.
type candidate struct {
	Entry
	pos int // document position of the markup
}

// heading is a heading, or a paragraph or list item that serves as one, in document order.
type heading struct {
	n     *html.Node // the h1-h6, <p> or <li>
	bold  *html.Node // for boldLevel, the bold text that is the heading
	runIn bool       // for boldLevel, the answer starts after bold, inside n
	level int        // 1-6, or boldLevel
	pos   int
	text  string
	qa    bool // inside a <summary> or <dt>: the details or dl rule owns it
}

// boldLevel is the level of a paragraph or list item headed by bold text: below h6, so it ends only at
// another such paragraph or a real heading.
const boldLevel = 7

// breakLevel is the level of what ends every heading's answer: <hr>, a thematic break (HTML Living Standard,
// "the hr element"), and a details or dl element that holds questions of its own.
const breakLevel = 0

// noStop marks a subtree with nothing that ends an answer.
const noStop = 100

type extractor struct {
	base     *url.URL
	pageFAQ  bool // the title, an h1 or the URL says FAQ
	pos      int
	headings []heading
	// stops maps a node to the lowest level of what ends an answer in its subtree, itself included:
	// headings, bold paragraphs, and at breakLevel <hr> and qaBlocks. Nodes with none are absent.
	stops    map[*html.Node]int
	qaBlocks map[*html.Node]bool // the details and dl elements that hold entries
	cands    []candidate
	seen     map[string]int // question key -> index in cands
}

// walk visits n and its descendants in document order. chrome says n is inside site chrome, qa inside a
// <summary> or <dt>. It returns the lowest stop level under n.
func (x *extractor) walk(n *html.Node, chrome, qa bool) int {
	x.pos++
	pos := x.pos
	level := noStop
	if n.Type == html.ElementNode {
		switch {
		case n.DataAtom == atom.Script:
			if isJSONLD(n) {
				x.jsonLD(n, pos)
			}
			return noStop
		case !chrome && isChrome(n):
			chrome = true
		}
		if l, ok := headingLevel(n); ok {
			level = l
			if !chrome {
				h := heading{n: n, level: l, pos: pos, qa: qa}
				title := n
				if l == boldLevel {
					h.bold, h.runIn = leadBold(n)
					title = h.bold
				}
				h.text = cleanQuestion(firstText(title))
				x.headings = append(x.headings, h)
			}
		} else if n.DataAtom == atom.Hr {
			level = breakLevel
		}
		if !chrome {
			switch n.DataAtom {
			case atom.Details:
				if x.details(n, pos) {
					level, x.qaBlocks[n] = breakLevel, true
				}
			case atom.Dl:
				if x.dl(n, pos) {
					level, x.qaBlocks[n] = breakLevel, true
				}
			case atom.Summary, atom.Dt:
				qa = true
			case atom.H1:
				if isFAQTitle(firstText(n)) {
					x.pageFAQ = true
				}
			}
		}
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		level = min(level, x.walk(c, chrome, qa))
	}
	if level != noStop {
		x.stops[n] = level
	}
	return level
}

// firstText is the one-line text of n.
func firstText(n *html.Node) string {
	s, _ := inlineText(n)
	return s
}

// headingLevel reports the level of n as a heading: 1-6 for h1-h6, boldLevel for a paragraph used as a
// heading ("<p><strong>How do I apply?</strong></p>") and for a paragraph or list item that opens with a
// bold question run in with its answer ("<p><b>Is it free?</b> Yes, ...</p>").
func headingLevel(n *html.Node) (int, bool) {
	switch n.DataAtom {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return int(n.Data[1] - '0'), true
	case atom.P, atom.Li:
		if b, rest := leadBold(n); b != nil && (rest && runInQuestion(b) || !rest && n.DataAtom == atom.P) {
			return boldLevel, true
		}
	}
	return 0, false
}

// leadBold returns the <strong> or <b> that n opens with, nothing but white space before it, and whether
// anything but white space and line breaks follows it.
func leadBold(n *html.Node) (bold *html.Node, rest bool) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.CommentNode || c.Type == html.TextNode && strings.TrimSpace(c.Data) == "":
		case bold == nil && c.Type == html.ElementNode && (c.DataAtom == atom.Strong || c.DataAtom == atom.B):
			bold = c
		case bold == nil:
			return nil, false
		case c.Type == html.ElementNode && c.DataAtom == atom.Br:
		default:
			return bold, true
		}
	}
	return bold, false
}

// runInQuestion reports whether a bold run-in opens its paragraph with a question: it must end with a
// question mark, since the bold words of a paragraph ("Note", "Tip", "Warning") are not otherwise questions.
func runInQuestion(bold *html.Node) bool {
	q := cleanQuestion(firstText(bold))
	return endsWithQuestionMark(q) && readsAsQuestion(q)
}

// isChrome reports whether n is site chrome whose content is never an FAQ entry: navigation, sidebars,
// footers, templates (never rendered as they stand) and the page's header (an <article>'s or <section>'s own
// header holds its title, which may say FAQ), matched by element, ARIA role (WAI-ARIA landmark roles) or a
// few conventional ids and classes.
func isChrome(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Nav, atom.Aside, atom.Footer, atom.Template:
		return true
	case atom.Header:
		for p := n.Parent; p != nil; p = p.Parent {
			if p.DataAtom == atom.Article || p.DataAtom == atom.Section {
				return false
			}
		}
		return true
	}
	for _, a := range n.Attr {
		switch a.Key {
		case "role":
			switch strings.ToLower(strings.TrimSpace(a.Val)) {
			case "navigation", "banner", "contentinfo", "complementary", "menu", "menubar", "search":
				return true
			}
		case "id", "class":
			for _, v := range strings.Fields(strings.ToLower(a.Val)) {
				switch v {
				case "nav", "navbar", "navigation", "menu", "sidebar", "breadcrumb", "breadcrumbs", "site-header",
					"site-footer":
					return true
				case "header", "footer":
					if a.Key == "id" {
						return true
					}
				}
			}
		}
	}
	return false
}

// fragment returns the id that addresses a question: that of one of the elements (the question's element
// first, then the elements holding it), else that of an element or named anchor inside the first, else that
// of an empty anchor just before the first ("<a name="q3"></a><h3>..."), else that of the first's parent when
// the first opens it.
func fragment(elems ...*html.Node) string {
	for _, n := range elems {
		if id := nodeID(n); id != "" {
			return id
		}
	}
	if len(elems) == 0 {
		return ""
	}
	var inner func(*html.Node) string
	inner = func(n *html.Node) string {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			if id := nodeID(c); id != "" {
				return id
			}
			if c.DataAtom == atom.A {
				if name, _ := attr(c, "name"); strings.TrimSpace(name) != "" {
					return strings.TrimSpace(name)
				}
			}
			if id := inner(c); id != "" {
				return id
			}
		}
		return ""
	}
	if id := inner(elems[0]); id != "" {
		return id
	}
	for s := elems[0].PrevSibling; s != nil; s = s.PrevSibling {
		switch {
		case s.Type == html.CommentNode, s.Type == html.TextNode && strings.TrimSpace(s.Data) == "":
			continue
		case s.Type == html.ElementNode && s.DataAtom == atom.A && strings.TrimSpace(firstText(s)) == "":
			if id := nodeID(s); id != "" {
				return id
			}
			if name, _ := attr(s, "name"); strings.TrimSpace(name) != "" {
				return strings.TrimSpace(name)
			}
		}
		break
	}
	if p := elems[0].Parent; p != nil && p.Type == html.ElementNode && firstElement(p) == elems[0] {
		// A wrapper per entry, opened by the question: "<div id="faq-3"><h3>...</h3>...</div>".
		return nodeID(p)
	}
	return ""
}

func firstElement(n *html.Node) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			return c
		}
	}
	return nil
}

func nodeID(n *html.Node) string {
	id, _ := attr(n, "id")
	return strings.TrimSpace(id)
}

// entryURL is the page's URL with fragment frag.
func (x *extractor) entryURL(frag string) string {
	u := *x.base
	u.Fragment = frag
	return u.String()
}

// explicit reports whether markup of kind source delimits its answer.
func explicit(source string) bool { return source != SourceHeading }

// add records an entry found at pos, merging it with an earlier one of the same question. It reports
// whether the entry has a question and an answer.
func (x *extractor) add(e Entry, pos int) bool {
	e.Question = cleanQuestion(e.Question)
	e.Answer = cleanAnswer(e.Answer)
	key := questionKey(e.Question)
	if key == "" || e.Answer == "" {
		return false
	}
	i, ok := x.seen[key]
	if !ok {
		x.seen[key] = len(x.cands)
		x.cands = append(x.cands, candidate{Entry: e, pos: pos})
		return true
	}
	old := &x.cands[i]
	keep, other := old.Entry, e
	if !explicit(old.Source) && explicit(e.Source) {
		keep, other = e, old.Entry
	}
	if !strings.Contains(keep.URL, "#") && strings.Contains(other.URL, "#") {
		keep.URL = other.URL
	}
	old.Entry = keep
	old.pos = min(old.pos, pos)
	return true
}

// result returns the entries in document order.
func (x *extractor) result() []Entry {
	sort.SliceStable(x.cands, func(i, j int) bool { return x.cands[i].pos < x.cands[j].pos })
	if len(x.cands) == 0 {
		return nil
	}
	out := make([]Entry, len(x.cands))
	for i, c := range x.cands {
		out[i] = c.Entry
	}
	return out
}
