package crawl

import (
	"bytes"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// extractLinks returns the canonical form of every <a href> and <area href> in
// body whose host is host, deduplicated, in document order. It reads the whole
// document (navigation included) with the streaming tokenizer, which is much
// cheaper than building a tree, and honours a <base href> element.
func extractLinks(body []byte, page *url.URL, host string) []string {
	z := html.NewTokenizer(bytes.NewReader(body))
	base := page
	seen := make(map[string]struct{})
	var out []string
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return out
		case html.StartTagToken, html.SelfClosingTagToken:
		default:
			continue
		}
		name, hasAttr := z.TagName()
		if !hasAttr {
			continue
		}
		isBase := string(name) == "base"
		if !isBase && string(name) != "a" && string(name) != "area" {
			continue
		}
		var href string
		found := false
		for {
			key, val, more := z.TagAttr()
			if string(key) == "href" {
				href, found = string(val), true
				break
			}
			if !more {
				break
			}
		}
		if !found {
			continue
		}
		if isBase {
			if b, err := page.Parse(strings.TrimSpace(href)); err == nil {
				base = b
			}
			continue
		}
		c, ok := Canonical(base, href)
		if !ok {
			continue
		}
		if hostOf(c) != host {
			continue
		}
		if _, dup := seen[c]; dup {
			continue
		}
		seen[c] = struct{}{}
		out = append(out, c)
	}
}

// hostOf returns the host[:port] part of a canonical URL without parsing it.
func hostOf(canonical string) string {
	rest := canonical
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// pathOf returns the path part of a canonical URL without parsing it.
func pathOf(canonical string) string {
	rest := canonical
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return "/"
	}
	rest = rest[i:]
	if j := strings.IndexByte(rest, '?'); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// skipExtension reports whether a link's path names a file that is never an
// HTML page or a PDF (images, styles, scripts, archives, media), so the crawler
// does not spend a request on it.
func skipExtension(p string) bool {
	i := strings.LastIndexByte(p, '.')
	if i < 0 || strings.Contains(p[i:], "/") {
		return false
	}
	switch strings.ToLower(p[i+1:]) {
	case "jpg", "jpeg", "png", "gif", "webp", "svg", "ico", "bmp", "tif", "tiff",
		"css", "js", "mjs", "map", "json", "xml", "rss", "atom", "txt", "csv",
		"zip", "gz", "tgz", "bz2", "xz", "7z", "rar", "tar", "dmg", "exe", "msi", "iso",
		"mp3", "mp4", "m4a", "m4v", "mov", "avi", "wmv", "webm", "ogg", "wav", "flac",
		"woff", "woff2", "ttf", "otf", "eot",
		"doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp", "rtf", "ics":
		return true
	}
	return false
}
