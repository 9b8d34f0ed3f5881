package faqmarkup

import (
	"encoding/json"
	"net/url"
	"sort"
	"strings"

	"golang.org/x/net/html"
)

// maxJSONDepth bounds how deep into a JSON-LD document an FAQPage is looked for.
const maxJSONDepth = 16

// isJSONLD reports whether a <script> holds JSON-LD: its type is application/ld+json, in any case and with
// or without parameters.
func isJSONLD(n *html.Node) bool {
	t, _ := attr(n, "type")
	t, _, _ = strings.Cut(t, ";")
	return strings.EqualFold(strings.TrimSpace(t), "application/ld+json")
}

// jsonLD reads the FAQPage entries of one JSON-LD block (JSON-LD 1.1, section 6: embedding in HTML). The
// block may hold one object, an array, or several values in a row; an object may carry an @graph; an FAQPage
// may be nested in another node (a WebPage's mainEntity). A value that does not decode ends the block: what
// decoded before it is kept.
func (x *extractor) jsonLD(script *html.Node, pos int) {
	var b strings.Builder
	for c := script.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	src := strings.TrimSpace(b.String())
	// Some pages wrap the data in a CDATA section or an HTML comment for old parsers.
	for _, wrap := range [][2]string{{"<![CDATA[", "]]>"}, {"<!--", "-->"}, {"//<![CDATA[", "//]]>"}} {
		if s, ok := strings.CutPrefix(src, wrap[0]); ok {
			src = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), wrap[1]))
		}
	}
	dec := json.NewDecoder(strings.NewReader(src))
	for dec.More() {
		var v any
		if err := dec.Decode(&v); err != nil {
			return
		}
		x.findFAQPages(v, pos, 0)
	}
}

// findFAQPages looks for FAQPage nodes in v. Object members are visited in key order, so that the result does
// not depend on map order.
func (x *extractor) findFAQPages(v any, pos, depth int) {
	if depth > maxJSONDepth {
		return
	}
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			x.findFAQPages(e, pos, depth+1)
		}
	case map[string]any:
		if hasType(t, "FAQPage") {
			x.faqPage(t, pos)
			return
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			x.findFAQPages(t[k], pos, depth+1)
		}
	}
}

// faqPage adds the Questions of an FAQPage's mainEntity: a Question's name (or, lacking one, its text) is
// the question, the text of its acceptedAnswer, or of each when there are several, the answer.
func (x *extractor) faqPage(page map[string]any, pos int) {
	for _, q := range list(page["mainEntity"]) {
		qm, ok := q.(map[string]any)
		if !ok || (qm["@type"] != nil && !hasType(qm, "Question")) {
			continue
		}
		question := htmlText(str(qm["name"]), true)
		if question == "" {
			question = htmlText(str(qm["text"]), true)
		}
		var answers []string
		for _, a := range list(qm["acceptedAnswer"]) {
			text := str(a)
			if am, ok := a.(map[string]any); ok {
				text = str(am["text"])
			}
			if t := htmlText(text, false); t != "" {
				answers = append(answers, t)
			}
		}
		frag := x.jsonFragment(str(qm["url"]))
		if frag == "" {
			frag = x.jsonFragment(str(qm["@id"]))
		}
		x.add(Entry{Question: question, Answer: strings.Join(answers, "\n\n"), URL: x.entryURL(frag),
			Source: SourceJSONLD}, pos)
	}
}

// jsonFragment returns the fragment of a Question's url or @id when it addresses a place on this page.
func (x *extractor) jsonFragment(ref string) string {
	if ref == "" {
		return ""
	}
	u, err := x.base.Parse(strings.TrimSpace(ref))
	if err != nil || u.Fragment == "" {
		return ""
	}
	if !sameDocument(u, x.base) {
		return ""
	}
	return u.Fragment
}

// sameDocument reports whether u addresses the document base, leaving aside the fragment, the case of the
// host, a trailing slash and the scheme (pages served over https often describe themselves as http).
func sameDocument(u, base *url.URL) bool {
	return strings.EqualFold(u.Host, base.Host) && u.RawQuery == base.RawQuery &&
		strings.TrimSuffix(u.EscapedPath(), "/") == strings.TrimSuffix(base.EscapedPath(), "/")
}

// hasType reports whether a JSON-LD node's @type is, or lists, the schema.org type name, written as a term
// ("FAQPage"), a compact IRI ("schema:FAQPage") or a full IRI ("https://schema.org/FAQPage").
func hasType(m map[string]any, name string) bool {
	for _, t := range list(m["@type"]) {
		s, ok := t.(string)
		if !ok {
			continue
		}
		if i := strings.LastIndexAny(s, "/:#"); i >= 0 {
			s = s[i+1:]
		}
		if s == name {
			return true
		}
	}
	return false
}

// list returns v as a list: JSON-LD allows one value where several are allowed.
func list(v any) []any {
	switch t := v.(type) {
	case nil:
		return nil
	case []any:
		return t
	}
	return []any{v}
}

// str returns v as a string: a string, the first string of a list, or a value object's @value.
func str(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []any:
		for _, e := range t {
			if s := str(e); s != "" {
				return s
			}
		}
	case map[string]any:
		return str(t["@value"])
	}
	return ""
}
