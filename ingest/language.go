package ingest

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest/clean"
	"github.com/ragproxy/ragproxy/markdown"
	"github.com/ragproxy/ragproxy/textnorm"
)

// detectPrefix is how much of a page's prose language detection reads: a few paragraphs decide, and reading
// less keeps detection a small share of cleaning (the detector takes about a millisecond for this much).
const detectPrefix = 2000

// detectFirst is how much of the prose detection reads first (see detectLanguage).
const detectFirst = 500

// pageLanguage is the language of a cleaned page as its own signals give it, an ISO 639 primary subtag: the
// markup's lang, else the page's own entry among its hreflang alternates, else the response's Content-Language
// (declared true for these three), else detection from its text; "" when none is sure (the site's main language
// fills it in, see fillLanguages).
func pageLanguage(c clean.Doc, pageURL, contentLanguage string) (lang string, declared bool) {
	if l := textnorm.Base(c.Lang); l != "" {
		return l, true
	}
	for _, a := range c.Alternates {
		if sameURL(a.URL, pageURL) {
			if l := textnorm.Base(a.Lang); l != "" {
				return l, true
			}
		}
	}
	if l := textnorm.Base(clean.FirstLanguage(contentLanguage)); l != "" {
		return l, true
	}
	return detectLanguage(prose(c.Markdown, detectPrefix)), false
}

// languagesFromURLs gives the pages whose language nothing declared the language their URL names, on a site
// that names languages in its URLs: a page at the same path as another under another language's folder
// ("/fr/guide/" beside "/en/guide/") or with another language before the extension ("ch07.fr.html" beside
// "ch07.en.html"). A translation left partly in the original language reads as the original; its URL says
// which version it is. A folder that only looks like a language ("/it/" for a computing department) names no
// other version, and its pages keep their detected language.
//
// It returns the pages it gave a language.
func languagesFromURLs(ix *index.Index, declared func(i int) bool) map[int]bool {
	type pageLang struct {
		page int
		lang string
	}
	named := map[int]bool{}
	groups := map[string][]pageLang{}
	for i, p := range ix.Pages {
		for _, m := range urlLanguages(p.URL) {
			groups[m.key] = append(groups[m.key], pageLang{i, m.lang})
		}
	}
	for _, g := range groups {
		langs := map[string]bool{}
		for _, n := range g {
			langs[n.lang] = true
		}
		if len(langs) < 2 {
			continue
		}
		for _, n := range g {
			if !declared(n.page) {
				ix.Pages[n.page].Lang = n.lang
				named[n.page] = true
			}
		}
	}
	return named
}

// urlMarker is a language a URL names, with the URL's key without it (see languageFolderKey).
type urlMarker struct{ key, lang string }

// urlLanguages are the languages u's path names: each segment, and each dotted part of the file name before
// its extension, that is a two-letter language code (a region may follow), with the URL's key without it.
func urlLanguages(u string) []urlMarker {
	pu, err := url.Parse(u)
	if err != nil {
		return nil
	}
	var out []urlMarker
	segs := strings.Split(strings.Trim(pu.Path, "/"), "/")
	for k, s := range segs {
		if l := languageCode(s); l != "" {
			if key, ok := languageFolderKey(u, l); ok {
				out = append(out, urlMarker{key, l})
			}
		}
		if k == len(segs)-1 && strings.Count(s, ".") >= 2 {
			parts := strings.Split(s, ".")
			for _, p := range parts[1 : len(parts)-1] {
				if l := languageCode(p); l != "" {
					if key, ok := languageFolderKey(u, l); ok {
						out = append(out, urlMarker{key, l})
					}
				}
			}
		}
	}
	return out
}

// languageCode is the language a URL part names ("de", "pt-BR", "zh_CN"), or "" when it is not a two-letter
// code with an optional region.
func languageCode(s string) string {
	if len(s) != 2 && (len(s) < 5 || len(s) > 7 || s[2] != '-' && s[2] != '_') {
		return ""
	}
	return textnorm.Base(s[:2])
}

// detectLanguage is the language text is written in, or "" when the detector is not sure. A page's first
// paragraphs usually decide (the detector's time grows with the text): the rest is read when they do not.
func detectLanguage(text string) string {
	if len(text) > detectFirst {
		cut := strings.LastIndexAny(text[:detectFirst], " \n")
		if l, ok := textnorm.DetectProse(text[:max(cut, 0)]); ok {
			return textnorm.Base(l)
		}
	}
	if l, ok := textnorm.DetectProse(text); ok {
		return textnorm.Base(l)
	}
	return ""
}

// prose is up to limit bytes of md's running text, what language detection reads: without code blocks, table
// rows, link targets and markup, which are in the language of commands and file names whatever the page's
// is (a translated manual keeps its package lists and commands in English).
func prose(md string, limit int) string {
	var b strings.Builder
	fence := false
	for line := range strings.Lines(md) {
		t := strings.TrimSpace(line)
		if markdown.FenceLine(t) {
			fence = !fence
			continue
		}
		if fence || t == "" || strings.HasPrefix(t, "|") || strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") {
			continue
		}
		t = linkTarget.ReplaceAllString(t, "")
		t = inlineCode.ReplaceAllString(t, " ")
		b.WriteString(t)
		b.WriteByte('\n')
		if b.Len() >= limit {
			break
		}
	}
	return b.String()
}

var (
	linkTarget = regexp.MustCompile(`\]\([^)]*\)`)
	inlineCode = regexp.MustCompile("`[^`]*`")
)

// sameURL reports whether a and b name the same page, a trailing slash or fragment aside.
func sameURL(a, b string) bool {
	ua, err1 := url.Parse(a)
	ub, err2 := url.Parse(b)
	if err1 != nil || err2 != nil {
		return a == b
	}
	ua.Fragment, ub.Fragment = "", ""
	return strings.EqualFold(ua.Host, ub.Host) && strings.TrimSuffix(ua.Path, "/") == strings.TrimSuffix(ub.Path, "/") &&
		ua.RawQuery == ub.RawQuery
}

// fillLanguages gives the pages whose language nothing told the site's main language (that of most pages
// that have one; English when none has). A language that only detection gave (sure reports the pages whose
// language was declared or named by their URL) counts when a few pages have it, at least
// max(minDetectedPages, 2% of the pages): a page of an English manual that quotes a French example is English.
func fillLanguages(ix *index.Index, sure func(i int) bool) {
	count := map[string]int{}
	for _, p := range ix.Pages {
		if p.Lang != "" {
			count[p.Lang]++
		}
	}
	least := max(minDetectedPages, len(ix.Pages)/50)
	for i := range ix.Pages {
		if l := ix.Pages[i].Lang; l != "" && count[l] < least && !sure(i) {
			count[l]--
			ix.Pages[i].Lang = ""
		}
	}
	main, best := "en", 0
	for l, n := range count {
		if n > best || n == best && l < main {
			main, best = l, n
		}
	}
	for i := range ix.Pages {
		if ix.Pages[i].Lang == "" {
			ix.Pages[i].Lang = main
		}
	}
}

// minDetectedPages is the fewest pages a detected language needs (see fillLanguages).
const minDetectedPages = 3

// alternates are the versions the previous index joined to p, as hreflang links, so that a page reused
// without cleaning keeps its versions.
func (r *reuse) alternates(p *index.Page) []clean.Alternate { return versionAlternates(r.ix, p) }

// versionAlternates are the versions ix joined to its page p, as hreflang links.
func versionAlternates(ix *index.Index, p *index.Page) []clean.Alternate {
	var out []clean.Alternate
	for _, id := range p.Versions {
		if id >= 0 && id < len(ix.Pages) {
			v := ix.Pages[id]
			out = append(out, clean.Alternate{Lang: v.Lang, URL: v.URL})
		}
	}
	return out
}

// joinVersions joins the pages that are one page in several languages, setting each one's Versions: those
// its hreflang links name (in either direction), and those at the same path under another language's folder
// ("/de/guide/" and "/en/guide/", the folder being the page's language). Pages in the same language are never
// versions of each other.
func joinVersions(ix *index.Index, docs map[string]*doc) {
	ids := make(map[string]int, len(ix.Pages))
	for i, p := range ix.Pages {
		ids[p.URL] = i
	}
	parent := make([]int, len(ix.Pages))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	union := func(a, b int) {
		if ra, rb := find(a), find(b); ra != rb {
			parent[max(ra, rb)] = min(ra, rb)
		}
	}
	joined := false
	byPath := map[string]int{}
	for i, p := range ix.Pages {
		if d := docs[p.URL]; d != nil {
			for _, a := range d.alternates {
				if j, ok := ids[a.URL]; ok && j != i {
					union(i, j)
					joined = true
				}
			}
		}
		if key, ok := languageFolderKey(p.URL, p.Lang); ok {
			if j, seen := byPath[key]; seen {
				union(i, j)
				joined = true
			} else {
				byPath[key] = i
			}
		}
	}
	if !joined {
		return
	}
	groups := map[int][]int{}
	for i := range ix.Pages {
		groups[find(i)] = append(groups[find(i)], i)
	}
	for _, g := range groups {
		if len(g) < 2 {
			continue
		}
		for _, i := range g {
			for _, j := range g {
				if j != i && ix.Pages[j].Lang != ix.Pages[i].Lang {
					ix.Pages[i].Versions = append(ix.Pages[i].Versions, j)
				}
			}
		}
	}
}

// languageFolderKey is u without the path segment that names lang ("https://h/de/guide/" for lang "de" is
// "h/guide"), or without the language before its file's extension, as content negotiation names variants
// ("ch02.de.html" is "ch02.html"), and whether u has either.
func languageFolderKey(u, lang string) (string, bool) {
	pu, err := url.Parse(u)
	if err != nil || lang == "" {
		return "", false
	}
	segs := strings.Split(strings.Trim(pu.Path, "/"), "/")
	if last := segs[len(segs)-1]; strings.Count(last, ".") >= 2 {
		parts := strings.Split(last, ".")
		for k := 1; k < len(parts)-1; k++ {
			if textnorm.Base(parts[k]) == lang && len(parts[k]) <= 5 {
				parts = append(parts[:k:k], parts[k+1:]...)
				segs[len(segs)-1] = strings.Join(parts, ".")
				return strings.ToLower(pu.Host) + "/" + strings.Join(segs, "/") + "?" + pu.RawQuery, true
			}
		}
	}
	for k, s := range segs {
		if textnorm.Base(s) == lang && len(s) <= 5 {
			rest := append(append([]string{}, segs[:k]...), segs[k+1:]...)
			return strings.ToLower(pu.Host) + "/" + strings.Join(rest, "/") + "?" + pu.RawQuery, true
		}
	}
	return "", false
}
