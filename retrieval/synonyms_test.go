package retrieval

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSynonyms(t *testing.T) {
	site := map[string]bool{"begins": true, "chair": true, "director": true, "fee": true, "fees": true,
		"recess": true, "telephone": true, "instructor": true}
	known := func(w string) bool { return site[w] }
	tests := []struct {
		q    string
		want []string
	}{
		{"when does instruction start for fall 2016?", []string{"begins"}},
		{"who is in charge of cog sci?", []string{"chair", "director"}},
		{"How much does it COST to park?", []string{"fee", "fees"}},
		{"when is spring break", []string{"recess"}},
		{"what does the fee cost", []string{"fees"}}, // "fee" is already asked for
		{"phone number of the dean", []string{"telephone"}},
		{"who teaches econ 1", []string{"instructor"}},
		{"tell me about the major", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, synonyms(tt.q, known)); diff != "" {
			t.Errorf("synonyms(%q) (-want +got):\n%s", tt.q, diff)
		}
	}
}
