package grounding

import (
	"net/url"
	"regexp"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/ragproxy/ragproxy/retrieval"
)

// LinkPolicy decides which links an answer may keep. Retrieved pages are data, and a hostile page can plant a
// link (a phishing page, an image whose URL carries data away), so a link survives only when both hold:
//   - its URL was in the context (a context page, or a URL inside the context's text), so the model did not
//     invent it;
//   - its host belongs to the site's own domains (the registrable domain of a page's host, so that
//     help.example.org and www.example.org go together) or to the operator's allow-list, so a page cannot send
//     readers elsewhere.
//
// URLs are compared normalised: scheme and host case, default ports, protocol-relative "//host" and bare
// "www.host" forms, fragments, trailing slashes and trailing punctuation do not matter. Only http, https and
// mailto links can be kept at all; javascript:, data: and every other scheme always go. A LinkPolicy is read-only
// after NewLinkPolicy and safe for concurrent use.
type LinkPolicy struct {
	urls  map[string]bool
	hosts map[string]bool
}

// contextURL finds the URLs inside retrieved text: absolute http(s) and mailto links.
var contextURL = regexp.MustCompile(`(?i)(?:https?://|mailto:)[^\s()\[\]<>"'` + "`" + `]+`)

// NewLinkPolicy allows the URLs of res's context on the hosts given (the site's own and the operator's), and the
// hosts of res's pages.
func NewLinkPolicy(res *retrieval.Result, hosts []string) *LinkPolicy {
	p := &LinkPolicy{urls: map[string]bool{}, hosts: map[string]bool{}}
	for _, h := range hosts {
		p.hosts[domainOf(strings.ToLower(h))] = true
	}
	for _, pg := range res.Pages {
		if n, ok := normalizeURL(pg.URL); ok {
			p.urls[n.key] = true
			p.hosts[domainOf(n.host)] = true
		}
	}
	for _, u := range contextURL.FindAllString(res.Context, -1) {
		if n, ok := normalizeURL(u); ok {
			p.urls[n.key] = true
		}
	}
	return p
}

// Allows reports whether an answer may link to target (a markdown link's target, an autolink, a bare URL).
func (p *LinkPolicy) Allows(target string) bool {
	n, ok := normalizeURL(target)
	if !ok || !p.urls[n.key] {
		return false
	}
	return n.scheme == "mailto" || p.hosts[domainOf(n.host)]
}

// domainOf is a host's registrable domain (its public suffix and one label more, from the public suffix list
// built into golang.org/x/net), or the host itself (an address, localhost).
func domainOf(host string) string {
	h := host
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[i:], "]") {
		h = h[:i] // a port
	}
	if d, err := publicsuffix.EffectiveTLDPlusOne(h); err == nil {
		return d
	}
	return host
}

// normalized is a URL reduced to what identifies the page it names.
type normalized struct {
	key, scheme, host string
}

// normalizeURL normalises an absolute http(s) or mailto URL, also written protocol-relative ("//host/...") or as a
// bare "www.host/..."; ok is false for any other scheme and for relative links.
func normalizeURL(raw string) (normalized, bool) {
	s := strings.TrimRight(strings.TrimSpace(raw), ".,;:!?")
	lower := strings.ToLower(s)
	switch {
	case strings.HasPrefix(lower, "//"):
		s = "https:" + s
	case strings.HasPrefix(lower, "www."):
		s = "https://" + s
	case strings.HasPrefix(lower, "mailto:"):
		addr := strings.ToLower(strings.TrimPrefix(lower, "mailto:"))
		if i := strings.IndexAny(addr, "?#"); i >= 0 {
			addr = addr[:i]
		}
		return normalized{key: "mailto:" + addr, scheme: "mailto"}, addr != ""
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil {
		return normalized{}, false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return normalized{}, false
	}
	host := strings.ToLower(u.Hostname())
	if port := u.Port(); port != "" && !(scheme == "http" && port == "80") && !(scheme == "https" && port == "443") {
		host += ":" + port
	}
	host = strings.TrimPrefix(host, "www.")
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	key := host + path // the scheme does not make another page
	if u.RawQuery != "" {
		key += "?" + u.RawQuery
	}
	return normalized{key: key, scheme: scheme, host: host}, true
}
