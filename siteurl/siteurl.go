// Package siteurl decides when two URLs name the same host, the same site or the same page, so that every part
// of ragproxy answers alike: ingest's crawl and its page identities, the link policy of answers, the URL prefixes
// of section assistants, and the admin API's check that a page is on the site. Its functions are pure and safe
// for concurrent use.
//
// The host form is the one of RFC 3986 section 6.2.3 (scheme-based normalisation): the host in lower case, the
// scheme's default port left out, an IPv6 literal in brackets. A site is a registrable domain (the public suffix
// list's "eTLD+1"), so help.example.org and www.example.org are one site.
package siteurl

import (
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// Host returns u's host as an identity: lower case, without the default port of an http or https scheme (80,
// 443), an IPv6 literal in brackets, another port after a colon ("example.org:8080", "[::1]:8080"). It is ""
// when u has no host.
func Host(u *url.URL) string {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if host == "" {
		return ""
	}
	if port == "80" && strings.EqualFold(u.Scheme, "http") || port == "443" && strings.EqualFold(u.Scheme, "https") {
		port = ""
	}
	if strings.Contains(host, ":") { // only an IPv6 literal holds colons
		host = "[" + host + "]"
	}
	if port != "" {
		return host + ":" + port
	}
	return host
}

// HostOf is Host of a URL as written; "" when it does not parse or names no host.
func HostOf(rawURL string) string {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return ""
	}
	return Host(u)
}

// Domain returns the site a host (as Host gives it, a port allowed) belongs to: its registrable domain, the
// public suffix and one label more, from the public suffix list built into golang.org/x/net ("example.org" for
// "www.example.org:8080"): two hosts are of one site when their Domains are equal. An IP address, a single
// label such as localhost, or a host the list cannot place is its own site, without its port.
func Domain(host string) string {
	h := stripPort(host)
	if _, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		return h
	}
	if d, err := publicsuffix.EffectiveTLDPlusOne(h); err == nil {
		return d
	}
	return h
}

// stripPort removes a ":port" from a host, leaving an IPv6 literal's own colons.
func stripPort(host string) string {
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		if strings.HasPrefix(host, "[") || strings.Count(host, ":") == 1 {
			return host[:i]
		}
	}
	return host
}

// Link is a link's target reduced to what identifies the page it names, for comparing links with each other.
type Link struct {
	// Key identifies the page: the host without "www.", then the path without a trailing slash and the query
	// ("example.org/fees?year=2025"), or "mailto:" and the address in lower case.
	Key string
	// Scheme is "http", "https" or "mailto"; Host is the host as Host gives it, without "www." ("" for mailto).
	Scheme, Host string
}

// ParseLink normalises an absolute http(s) or mailto link, also written protocol-relative ("//host/...") or as a
// bare "www.host/..."; ok is false for any other scheme, for relative links and for URLs with user info. Two
// links name the same page when their Keys are equal: scheme, host case, a default port, "www.", a fragment, a
// trailing slash and trailing sentence punctuation do not matter; the query does, as written.
func ParseLink(raw string) (l Link, ok bool) {
	s := strings.TrimRight(strings.TrimSpace(raw), ".,;:!?")
	lower := strings.ToLower(s)
	switch {
	case strings.HasPrefix(lower, "//"):
		s = "https:" + s
	case strings.HasPrefix(lower, "www."):
		s = "https://" + s
	case strings.HasPrefix(lower, "mailto:"):
		addr := strings.TrimPrefix(lower, "mailto:")
		if i := strings.IndexAny(addr, "?#"); i >= 0 {
			addr = addr[:i]
		}
		return Link{Key: "mailto:" + addr, Scheme: "mailto"}, addr != ""
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil {
		return Link{}, false
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return Link{}, false
	}
	host := strings.TrimPrefix(Host(u), "www.")
	key := host + strings.TrimSuffix(u.EscapedPath(), "/") // the scheme does not make another page
	if u.RawQuery != "" {
		key += "?" + u.RawQuery
	}
	return Link{Key: key, Scheme: scheme, Host: host}, true
}
