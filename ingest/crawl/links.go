package crawl

import (
	"bytes"
	"net/url"
	"strings"
	"sync"

	"golang.org/x/net/html"
)

// extractLinks returns the canonical form of every <a href> and <area href> in
// body whose host is host, deduplicated, in document order. It reads the whole
// document (navigation included) and honours a <base href> element.
//
// It is a dedicated scanner rather than golang.org/x/net/html's tokenizer,
// which costs about ten times as much per byte and made link extraction the
// slowest part of reading a mirror. It follows the tokenizer where it matters
// for links: comments are skipped, the raw-text elements (script, style,
// textarea, title, noscript, iframe, noembed, noframes, xmp) are not scanned,
// attribute values may be double-quoted, single-quoted or bare, and character
// references in them are decoded. TestExtractLinksMatchesTokenizer checks the
// two agree on every corpus page.
//
// cache, when not nil, remembers the canonical form of root-relative links, which every page of a site repeats
// (its navigation, or a catalogue's "/search/?P=ECON 1" course links, whose query takes the slow path of
// Canonical).
func extractLinks(body []byte, page *url.URL, host string, cache *linkCache) []string {
	base := page
	seen := make(map[string]struct{})
	var out []string
	i := 0
	for i < len(body) {
		j := bytes.IndexByte(body[i:], '<')
		if j < 0 {
			break
		}
		i += j
		rest := body[i:]
		if bytes.HasPrefix(rest, []byte("<!--")) {
			k := bytes.Index(rest[4:], []byte("-->"))
			if k < 0 {
				break
			}
			i += 4 + k + 3
			continue
		}
		n := tagNameLen(rest[1:])
		if n == 0 {
			i++
			continue
		}
		name := rest[1 : 1+n]
		href, hasHref, end := scanAttrs(rest, 1+n)
		i += end
		switch {
		case equalFold(name, "a"), equalFold(name, "area"):
		case equalFold(name, "base"):
			if hasHref {
				if b, err := page.Parse(strings.TrimSpace(href)); err == nil {
					base = b
				}
			}
			continue
		default:
			if isRawText(name) {
				i += rawTextEnd(body[i:], name)
			}
			continue
		}
		if !hasHref {
			continue
		}
		c, ok := cache.canonical(base, href)
		if !ok || hostOf(c) != host {
			continue
		}
		if _, dup := seen[c]; dup {
			continue
		}
		seen[c] = struct{}{}
		out = append(out, c)
	}
	return out
}

// tagNameLen returns the length of the tag name at the start of b: an ASCII
// letter followed by anything but whitespace, '/' and '>' (as the tokenizer).
func tagNameLen(b []byte) int {
	if len(b) == 0 || !isLetter(b[0]) {
		return 0
	}
	n := 1
	for n < len(b) && !isSpace(b[n]) && b[n] != '/' && b[n] != '>' {
		n++
	}
	return n
}

// scanAttrs reads the attributes of the tag that starts at tag[0] == '<', from
// offset i, to the closing '>'. It returns the decoded href value, whether
// there was one, and the offset just past the tag.
func scanAttrs(tag []byte, i int) (href string, ok bool, end int) {
	for i < len(tag) {
		for i < len(tag) && (isSpace(tag[i]) || tag[i] == '/') {
			i++
		}
		if i >= len(tag) {
			break
		}
		if tag[i] == '>' {
			return href, ok, i + 1
		}
		// Attribute name: up to whitespace, '/', '>' or '=' (a leading '=' is part of it).
		start := i
		i++
		for i < len(tag) && !isSpace(tag[i]) && tag[i] != '/' && tag[i] != '>' && tag[i] != '=' {
			i++
		}
		name := tag[start:i]
		for i < len(tag) && isSpace(tag[i]) {
			i++
		}
		if i >= len(tag) || tag[i] != '=' {
			continue
		}
		i++
		for i < len(tag) && isSpace(tag[i]) {
			i++
		}
		var val []byte
		if i < len(tag) && (tag[i] == '"' || tag[i] == '\'') {
			q := tag[i]
			k := bytes.IndexByte(tag[i+1:], q)
			if k < 0 {
				return href, ok, len(tag)
			}
			val = tag[i+1 : i+1+k]
			i += k + 2
		} else {
			start := i
			for i < len(tag) && !isSpace(tag[i]) && tag[i] != '>' {
				i++
			}
			val = tag[start:i]
		}
		if !ok && equalFold(name, "href") {
			href, ok = string(val), true
			if bytes.IndexByte(val, '&') >= 0 {
				href = html.UnescapeString(href)
			}
		}
	}
	return href, ok, len(tag)
}

// isRawText reports whether the tokenizer reads the element's content as raw
// text, in which a '<' does not start a tag.
func isRawText(name []byte) bool {
	for _, t := range [...]string{"script", "style", "textarea", "title", "noscript", "iframe", "noembed", "noframes", "xmp", "plaintext"} {
		if equalFold(name, t) {
			return true
		}
	}
	return false
}

// rawTextEnd returns the offset in b of the end tag </name (case-insensitive),
// or len(b) when there is none.
func rawTextEnd(b, name []byte) int {
	i := 0
	for {
		j := bytes.Index(b[i:], []byte("</"))
		if j < 0 {
			return len(b)
		}
		i += j
		after := b[i+2:]
		if len(after) >= len(name) && bytes.EqualFold(after[:len(name)], name) &&
			(len(after) == len(name) || isSpace(after[len(name)]) || after[len(name)] == '>' || after[len(name)] == '/') {
			return i
		}
		i += 2
	}
}

func isLetter(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' }

func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		if b[i]|0x20 != s[i] { // s is lowercase ASCII letters
			return false
		}
	}
	return true
}

// hostOf returns the host[:port] part of a canonical URL without parsing it: siteurl.Host of it (a canonical
// URL's host is in that form already), at the cost of a string search, for the checks of every link found.
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

// linkCache memoises Canonical for the links whose canonical form does not depend on the page path: absolute
// http(s) links, and root-relative ones ("/a/b?q"), which depend only on the page's scheme and host. Every page
// of a site repeats most of them (its navigation, links to other departments, a catalogue's course search
// links). It is safe for concurrent use; a nil *linkCache caches nothing.
type linkCache struct {
	m sync.Map // origin + " " + href -> canonResult
}

type canonResult struct {
	url string
	ok  bool
}

func (lc *linkCache) canonical(base *url.URL, href string) (string, bool) {
	h := strings.TrimSpace(href)
	if lc == nil || base == nil || h == "" {
		return Canonical(base, href)
	}
	if c, ok := canonicalFast(base, h); ok {
		return c, true
	}
	var key string
	switch lower := strings.ToLower(h[:min(len(h), 8)]); {
	case strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://"):
		key = " " + h
	case h[0] == '/' && (len(h) == 1 || h[1] != '/'):
		key = base.Scheme + "://" + base.User.String() + "@" + base.Host + " " + h
	default:
		return Canonical(base, href)
	}
	if r, ok := lc.m.Load(key); ok {
		cr := r.(canonResult)
		return cr.url, cr.ok
	}
	c, ok := Canonical(base, href)
	lc.m.Store(key, canonResult{c, ok})
	return c, ok
}

// Links returns the same-host links of an HTML page whose canonical URL is pageURL, canonical and in document
// order, as a crawl records them in Page.Links: for a page that arrives other than by a crawl, such as one an
// operator puts into the index.
func Links(body []byte, pageURL string) []string {
	c, ok := Canonical(nil, pageURL)
	if !ok {
		return nil
	}
	u, err := url.Parse(c)
	if err != nil {
		return nil
	}
	return extractLinks(body, u, hostOf(c), nil)
}
