package index

import (
	"slices"
	"testing"
)

// A page without a language is English; the languages come by page count, the main one first, ties by tag.
func TestLanguageTags(t *testing.T) {
	ix := &Index{Pages: []Page{{Lang: "de"}, {}, {Lang: "fr"}, {Lang: "de"}, {Lang: "en"}, {Lang: "ja"}, {Lang: "ja"}}}
	if got, want := ix.LanguageTags(), []string{"de", "en", "ja", "fr"}; !slices.Equal(got, want) {
		t.Errorf("LanguageTags() = %q, want %q", got, want)
	}
	if got := ix.MainLanguage(); got != "de" {
		t.Errorf("MainLanguage() = %q, want de", got)
	}
	if got := (&Index{}).LanguageTags(); got != nil {
		t.Errorf("an index without pages: %q, want none", got)
	}
}
