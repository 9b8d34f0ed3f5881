package grounding

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseSiteFAQUse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want SiteFAQUse
	}{{"evidence", SiteFAQEvidence}, {"direct", SiteFAQDirect}, {"off", SiteFAQOff}} {
		if got, err := ParseSiteFAQUse(tc.in); err != nil || got != tc.want {
			t.Errorf("ParseSiteFAQUse(%q) = %v, %v, want %v", tc.in, got, err, tc.want)
		}
	}
	if _, err := ParseSiteFAQUse("Direct"); err == nil || err.Error() != `"Direct": want evidence, direct or off` {
		t.Errorf("an unknown use: %v", err)
	}
}

func TestResolveAssistants(t *testing.T) {
	defs := []AssistantDef{
		{Name: "nursing", Prefixes: []string{"/programs/nursing/"}, From: "--assistant nursing"},
		{Name: "admissions", Prefixes: []string{"https://www.example.edu/admissions/", "/tuition/"}, From: "file: entry 1"},
	}
	ds, err := ResolveAssistants(defs, "site")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"nursing", "admissions"}, ds.Names()); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if d, ok := ds.Find("admissions"); !ok || d.Scope == nil || d.From != "file: entry 1" {
		t.Errorf("Find(admissions) = %+v, %v", d, ok)
	}
	for name, bad := range map[string][]AssistantDef{
		"invalid name": {{Name: "no spaces", Prefixes: []string{"/a/"}}},
		"duplicate":    {defs[0], defs[0]},
		"reserved":     {{Name: "site", Prefixes: []string{"/a/"}}},
		"no prefixes":  {{Name: "empty"}},
	} {
		if _, err := ResolveAssistants(bad, "site"); !errors.Is(err, ErrAssistant) {
			t.Errorf("%s: err = %v, want ErrAssistant", name, err)
		}
	}
}
