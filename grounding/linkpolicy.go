package grounding

import (
	"regexp"
	"strings"

	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/siteurl"
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
		p.hosts[siteurl.Domain(strings.ToLower(h))] = true
	}
	for _, pg := range res.Pages {
		if n, ok := siteurl.ParseLink(pg.URL); ok {
			p.urls[n.Key] = true
			p.hosts[siteurl.Domain(n.Host)] = true
		}
	}
	for _, u := range contextURL.FindAllString(res.Context, -1) {
		if n, ok := siteurl.ParseLink(u); ok {
			p.urls[n.Key] = true
		}
	}
	return p
}

// Allows reports whether an answer may link to target (a markdown link's target, an autolink, a bare URL). A nil
// policy allows nothing.
func (p *LinkPolicy) Allows(target string) bool {
	if p == nil {
		return false
	}
	n, ok := siteurl.ParseLink(target)
	if !ok || !p.urls[n.Key] {
		return false
	}
	return n.Scheme == "mailto" || p.hosts[siteurl.Domain(n.Host)]
}
