package faq

import (
	"slices"
	"strings"
	"testing"
)

// checkEntries asserts what every entry satisfies.
func checkEntries(t *testing.T, entries []Entry) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range entries {
		if strings.TrimSpace(e.Question) == "" || strings.TrimSpace(e.Answer) == "" {
			t.Errorf("entry with an empty question or answer: %+v", e)
		}
		if !slices.Contains([]string{SourceJSONLD, SourceDetails, SourceDL, SourceHeading}, e.Source) {
			t.Errorf("entry with source %q: %+v", e.Source, e)
		}
		k := questionKey(e.Question)
		if seen[k] {
			t.Errorf("question %q twice", e.Question)
		}
		seen[k] = true
	}
}
