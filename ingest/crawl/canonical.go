package crawl

import (
	"net/netip"
	"net/url"
	"path"
	"sort"
	"strings"

	"github.com/ragproxy/ragproxy/siteurl"
)

// isTracking reports whether a query parameter identifies a campaign or a
// click rather than a document; two URLs that differ only in such parameters
// are the same page.
func isTracking(name string) bool {
	name = strings.ToLower(name)
	if strings.HasPrefix(name, "utm_") {
		return true
	}
	switch name {
	case "gclid", "dclid", "fbclid", "msclkid", "yclid", "mc_cid", "mc_eid", "_ga", "_gl",
		"_hsenc", "_hsmi", "igshid", "mkt_tok", "oly_anon_id", "oly_enc_id", "vero_id", "s_kwcid":
		return true
	}
	return false
}

// Canonical resolves href against base and returns the canonical absolute form
// used as a page's identity everywhere in ingest. It reports false when href is
// not an http(s) URL (mailto:, javascript:, tel:, data:, ...) or cannot be parsed.
//
// The canonical form has a lowercase scheme and host, no user info, no default
// port (80 for http, 443 for https), no fragment, dot segments and repeated
// slashes removed, "index.html" and "index.htm" folded into their directory, and
// a trailing slash on every path whose last segment has no extension, so
// "/a/b", "/a/b/" and "/a/b/index.html" are one page. The query is kept with its
// parameters sorted by name, minus tracking parameters (utm_*, gclid, fbclid, ...).
func Canonical(base *url.URL, href string) (string, bool) {
	href = strings.TrimSpace(href)
	if c, ok := canonicalFast(base, href); ok {
		return c, true
	}
	ref, err := url.Parse(href)
	if err != nil {
		return "", false
	}
	u := ref
	if base != nil {
		u = base.ResolveReference(ref)
	}
	scheme, host, ok := canonicalOrigin(u)
	if !ok {
		return "", false
	}
	out := url.URL{Scheme: scheme, Host: host, Path: canonicalPath(u.Path)}
	if u.RawQuery != "" {
		out.RawQuery = canonicalQuery(u.RawQuery)
	}
	return out.String(), true
}

// canonicalFast handles the commonest link, a root-relative path of plain
// characters without a query, without parsing it; it gives the same result as
// the general path (FuzzCanonicalFast checks) at a fraction of the cost.
func canonicalFast(base *url.URL, href string) (string, bool) {
	if base == nil || len(href) == 0 || href[0] != '/' || (len(href) > 1 && href[1] == '/') {
		return "", false
	}
	cut := -1
	for i := 0; i < len(href); i++ {
		c := href[i]
		if c == '#' && cut < 0 {
			cut = i
			continue
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '/' || c == '-' || c == '_' || c == '.' || c == '~' || c == ',') {
			return "", false
		}
	}
	if cut >= 0 {
		href = href[:cut]
	}
	if strings.Contains(href, "//") || strings.Contains(href, "/.") {
		return "", false // empty and dot segments: leave them to ResolveReference
	}
	scheme, host, ok := canonicalOrigin(base)
	if !ok {
		return "", false
	}
	return scheme + "://" + host + canonicalPath(href), true
}

// canonicalOrigin returns u's lowercase scheme and its host as siteurl.Host
// gives it; false unless u is http(s) with a valid host.
func canonicalOrigin(u *url.URL) (scheme, host string, ok bool) {
	scheme = strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", "", false
	}
	if name := u.Hostname(); strings.Contains(name, ":") { // only an IPv6 literal may hold colons
		if _, err := netip.ParseAddr(name); err != nil {
			return "", "", false
		}
	}
	host = siteurl.Host(u)
	return scheme, host, host != ""
}

// canonicalPath cleans p and applies the index and trailing-slash folding.
func canonicalPath(p string) string {
	if p == "" || p == "/" {
		return "/"
	}
	dir := strings.HasSuffix(p, "/")
	p = path.Clean("/" + p)
	last := p[strings.LastIndexByte(p, '/')+1:]
	switch strings.ToLower(last) {
	case "index.html", "index.htm":
		p = p[:len(p)-len(last)]
		return p
	}
	if p == "/" {
		return p
	}
	if dir || !strings.Contains(last, ".") {
		return p + "/"
	}
	return p
}

// canonicalQuery sorts the parameters by name (keeping the order of repeated
// values) and drops tracking parameters. A query that does not parse is kept as is.
func canonicalQuery(raw string) string {
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return raw
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		if isTracking(k) {
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		for _, v := range vals[k] {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			b.WriteString(url.QueryEscape(k))
			b.WriteByte('=')
			b.WriteString(url.QueryEscape(v))
		}
	}
	return b.String()
}
