package crawl

import (
	"bytes"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// headHints reads the document head of an HTML page at page and returns the target of a meta refresh and the
// URL of a <link rel="canonical">, each resolved against the document's base URL (a <base href> in the head
// wins), or "" when the page has none. It stops at the first element that does not belong in a head, so the
// cost does not grow with the body.
//
// A meta refresh is <meta http-equiv="refresh" content="N; url=...">, parsed as the HTML standard's shared
// declarative refresh steps do (https://html.spec.whatwg.org/multipage/semantics.html#shared-declarative-refresh-steps);
// one without a URL reloads the page and is no redirect. The canonical link is the first <link> whose rel
// tokens include "canonical" (RFC 6596).
func headHints(body []byte, page *url.URL) (refresh, canonical string) {
	base := page
	var refreshRef, canonicalRef string
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return resolveHint(base, refreshRef), resolveHint(base, canonicalRef)
		case html.EndTagToken:
			if name, _ := z.TagName(); atom.Lookup(name) == atom.Head {
				return resolveHint(base, refreshRef), resolveHint(base, canonicalRef)
			}
			continue
		case html.StartTagToken, html.SelfClosingTagToken:
		default:
			continue
		}
		name, hasAttr := z.TagName()
		a := atom.Lookup(name)
		switch a {
		case atom.Html, atom.Head, atom.Title, atom.Script, atom.Style, atom.Noscript, atom.Template:
			continue
		case atom.Base, atom.Meta, atom.Link:
		default:
			return resolveHint(base, refreshRef), resolveHint(base, canonicalRef)
		}
		attrs := map[string]string{}
		for hasAttr {
			var k, v []byte
			k, v, hasAttr = z.TagAttr()
			if _, dup := attrs[string(k)]; !dup {
				attrs[string(k)] = string(v)
			}
		}
		switch a {
		case atom.Base:
			if h, ok := attrs["href"]; ok {
				if b, err := page.Parse(strings.TrimSpace(h)); err == nil {
					base = b
				}
			}
		case atom.Meta:
			if refreshRef == "" && strings.EqualFold(strings.TrimSpace(attrs["http-equiv"]), "refresh") {
				refreshRef = refreshURL(attrs["content"])
			}
		case atom.Link:
			if canonicalRef == "" && hasToken(attrs["rel"], "canonical") {
				canonicalRef = strings.TrimSpace(attrs["href"])
			}
		}
	}
}

// resolveHint returns the canonical form of ref against base, or "" when ref is empty or not an http(s) URL.
func resolveHint(base *url.URL, ref string) string {
	if ref == "" {
		return ""
	}
	c, ok := Canonical(base, ref)
	if !ok {
		return ""
	}
	return c
}

// hasToken reports whether the space-separated list v holds tok, ASCII case-insensitively (a rel attribute).
func hasToken(v, tok string) bool {
	for _, f := range strings.Fields(v) {
		if strings.EqualFold(f, tok) {
			return true
		}
	}
	return false
}

// refreshURL returns the URL of a meta refresh's content attribute ("5; url='/next/'"), or "" when it names
// none or does not parse, following the HTML standard's shared declarative refresh steps.
func refreshURL(content string) string {
	s := strings.TrimLeft(content, " \t\n\f\r")
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 && (i >= len(s) || s[i] != '.') {
		return "" // no time: not a refresh
	}
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	s = s[i:]
	if s == "" {
		return ""
	}
	if s[0] != ';' && s[0] != ',' && !isSpace(s[0]) {
		return ""
	}
	s = strings.TrimLeft(s, " \t\n\f\r")
	if s != "" && (s[0] == ';' || s[0] == ',') {
		s = s[1:]
	}
	s = strings.TrimLeft(s, " \t\n\f\r")
	if len(s) >= 3 && strings.EqualFold(s[:3], "url") {
		rest := strings.TrimLeft(s[3:], " \t\n\f\r")
		if rest != "" && rest[0] == '=' {
			s = strings.TrimLeft(rest[1:], " \t\n\f\r")
		}
	}
	if s != "" && (s[0] == '"' || s[0] == '\'') {
		q := s[0]
		s = s[1:]
		if j := strings.IndexByte(s, q); j >= 0 {
			s = s[:j]
		}
	}
	return strings.TrimSpace(s)
}
