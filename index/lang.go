package index

import (
	"cmp"
	"slices"
)

// PageLang is page id's language, "en" for a page of an index built before pages had languages.
func (ix *Index) PageLang(id int) string {
	if l := ix.Pages[id].Lang; l != "" {
		return l
	}
	return "en"
}

// ChunkLang is chunk id's language: its page's.
func (ix *Index) ChunkLang(id int) string { return ix.PageLang(ix.Chunks[id].PageID) }

// LanguageCount is how many pages of an index are in one language.
type LanguageCount struct {
	Lang  string `json:"lang"`
	Pages int    `json:"pages"`
}

// Languages counts the index's pages per language, the site's main language (most pages) first, ties in tag
// order.
func (ix *Index) Languages() []LanguageCount {
	n := map[string]int{}
	for i := range ix.Pages {
		n[ix.PageLang(i)]++
	}
	out := make([]LanguageCount, 0, len(n))
	for l, c := range n {
		out = append(out, LanguageCount{Lang: l, Pages: c})
	}
	slices.SortFunc(out, func(a, b LanguageCount) int {
		return cmp.Or(b.Pages-a.Pages, cmp.Compare(a.Lang, b.Lang))
	})
	return out
}

// LanguageTags are the languages of the index's pages, as Languages orders them (the main one first); nil for an
// index without pages.
func (ix *Index) LanguageTags() []string {
	var out []string
	for _, l := range ix.Languages() {
		out = append(out, l.Lang)
	}
	return out
}

// MainLanguage is the language of most of the index's pages ("en" for an empty index).
func (ix *Index) MainLanguage() string {
	if ls := ix.Languages(); len(ls) > 0 {
		return ls[0].Lang
	}
	return "en"
}
