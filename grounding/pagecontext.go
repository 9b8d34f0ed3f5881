package grounding

import (
	"net/http"
	"net/url"
	"strings"
	"unicode"
)

// The chat widget (package webui) asks from a page of the site: it sends that page's address and title with each
// question, so that "what does this page say about fees?" or "who do I contact here?" can be answered about it.

// Headers that carry the page a visitor is reading when they ask from the chat widget.
const (
	// HeaderPage is the page's URL (http or https, at most maxPageURL bytes).
	HeaderPage = "X-Ragproxy-Page"
	// HeaderPageTitle is the page's title, percent-encoded UTF-8 (a header value is bytes, a title any text).
	HeaderPageTitle = "X-Ragproxy-Page-Title"
)

const (
	maxPageURL   = 2048
	maxPageTitle = 200 // runes
)

// PageContext is the page a visitor is reading.
type PageContext struct {
	URL, Title string
}

// PageFrom reads the page a request was asked from; ok is false when it names none or an invalid one. The title
// is cut to 200 characters, on one line, without angle brackets (so it cannot pose as the prompt's fences).
func PageFrom(h http.Header) (p PageContext, ok bool) {
	raw := strings.TrimSpace(h.Get(HeaderPage))
	if raw == "" || len(raw) > maxPageURL {
		return p, false
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return p, false
	}
	u.Fragment, u.RawFragment = "", ""
	p.URL = u.String()
	title, err := url.QueryUnescape(h.Get(HeaderPageTitle))
	if err != nil {
		title = ""
	}
	title = strings.Join(strings.FieldsFunc(title, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || r == '<' || r == '>'
	}), " ")
	if r := []rune(title); len(r) > maxPageTitle {
		title = string(r[:maxPageTitle]) + "…"
	}
	p.Title = title
	return p, true
}

// Sentence tells the model which page the visitor is on.
func (p PageContext) Sentence() string {
	page := p.URL
	if p.Title != "" {
		page = "\"" + strings.ReplaceAll(p.Title, "\"", "'") + "\" (" + p.URL + ")"
	}
	return "The visitor is reading the page " + page + " of the site: when the question says \"this page\" or " +
		"\"here\", it means that page."
}
