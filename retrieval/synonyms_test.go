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

func TestTopPagesLinkPrior(t *testing.T) {
	// Page 0 repeats the query's words; page 1 scores a little lower but five pages link to it.
	r := &Retriever{inLinks: []int{0, 5, 0}}
	fused := func() []scored { return []scored{{0, 1.0}, {1, 0.95}, {2, 0.5}} }
	ids := func(ss []scored) []int {
		var out []int
		for _, s := range ss {
			out = append(out, s.id)
		}
		return out
	}
	tests := []struct {
		name  string
		prior float64
		keep  int
		want  []int
	}{
		{"prior lifts the linked page", 0.1, 12, []int{1, 0, 2}},
		{"no prior keeps fused order", -1, 12, []int{0, 1, 2}},
		{"cut after the prior", 0.1, 1, []int{1}},
	}
	for _, tt := range tests {
		r.cfg = Config{LinkPrior: tt.prior, FusedPages: tt.keep}.withDefaults()
		if diff := cmp.Diff(tt.want, ids(r.topPages(fused()))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
