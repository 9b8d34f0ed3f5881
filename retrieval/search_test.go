package retrieval

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ragproxy/ragproxy/index"
)

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

func TestLeadingPage(t *testing.T) {
	type hit struct {
		page  int
		score float64
	}
	tests := []struct {
		name  string
		ratio float64
		hits  []hit
		want  int
	}{
		{"first page far ahead", 1.4, []hit{{3, 10}, {5, 7}, {1, 6}}, 3},
		{"exactly the ratio", 1.4, []hit{{3, 14}, {5, 10}}, 3},
		{"close behind", 1.4, []hit{{3, 10}, {5, 8}}, -1},
		// In a list of chunks the next page is the first hit of another page.
		{"chunks of the first page before the next page", 1.4, []hit{{3, 10}, {3, 9.5}, {5, 6}}, 3},
		{"next page close behind after the first page's chunks", 1.4, []hit{{3, 10}, {3, 9.5}, {5, 9}}, -1},
		{"one page only", 1.4, []hit{{3, 10}, {3, 2}}, -1},
		{"one hit", 1.4, []hit{{3, 10}}, -1},
		{"no hits", 1.4, nil, -1},
		{"off", -1, []hit{{3, 10}, {5, 1}}, -1},
	}
	for _, tt := range tests {
		r := &Retriever{cfg: Config{LeadRatio: tt.ratio}.withDefaults()}
		got := r.leadingPage(len(tt.hits), func(i int) int { return tt.hits[i].page }, func(i int) float64 { return tt.hits[i].score })
		if got != tt.want {
			t.Errorf("%s: leadingPage = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestAddLeads(t *testing.T) {
	// Three lists fused (K = 3, ranks from 0): a lead of weight 1 adds 1/3, one of weight 0.5 adds 1/6.
	r := &Retriever{cfg: Config{}.withDefaults()}
	fused := []scored{{0, 0.6}, {1, 0.5}, {2, 0.4}}
	got := r.addLeads(fused, []scored{{2, 1}, {1, 0.5}}, 3)
	want := []scored{{2, 0.4 + 1.0/3}, {1, 0.5 + 0.5/3}, {0, 0.6}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(scored{}), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("addLeads (-want +got):\n%s", diff)
	}
	if got := r.addLeads([]scored{{0, 1}}, nil, 3); len(got) != 1 || got[0].score != 1 {
		t.Errorf("no votes: %v, want the fused scores as they were", got)
	}
}

func TestTopChunks(t *testing.T) {
	// Pages 0 (ranked first) and 1 both carry the passage "shared"; page 1's copy scored higher.
	ix := &index.Index{Chunks: []index.Chunk{
		{ID: 0, PageID: 1, Text: "shared\n"},
		{ID: 1, PageID: 1, Text: "only on page 1"},
		{ID: 2, PageID: 0, Text: "shared"},
		{ID: 3, PageID: 0, Text: "only on page 0"},
	}}
	pages := []scored{{0, 1}, {1, 0.9}}
	fused := func() []scored { return []scored{{0, 1.0}, {1, 0.9}, {2, 0.85}, {3, 0.8}} }
	tests := []struct {
		name  string
		boost float64
		keep  int
		want  []int
	}{
		// Without the boost: the copy on page 0 replaces page 1's in place.
		{"copies once, on the best page", -1, 40, []int{2, 1, 3}},
		// Boost 1: page 0's chunks score x2, page 1's x1.5, so "only on page 0" (1.6) passes "only on page 1" (1.35).
		{"page boost puts page 0 first", 1, 40, []int{2, 3, 1}},
		{"page boost, then the cut", 1, 2, []int{2, 3}},
		{"keep cuts", -1, 1, []int{2}},
	}
	for _, tt := range tests {
		keys, err := textKeys(ix)
		if err != nil {
			t.Fatal(err)
		}
		r := &Retriever{ix: ix, textKeys: keys}
		r.cfg = Config{PageBoost: tt.boost, KeepChunks: tt.keep}.withDefaults()
		var got []int
		for _, c := range r.topChunks(fused(), pages, r.cfg.KeepChunks) {
			got = append(got, c.id)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestSameQueries(t *testing.T) {
	queries := []string{"who is in charge of cog sci?", "charge cog sci", "charge cog sci chair director"}
	vecs := [][]float32{{1, 0}, {1, 0}, {0.6, 0.8}}
	s := sameQueries(queries, vecs)
	for _, list := range []string{ListChunkBM25, ListSummaryDense} {
		if s.key(list, 0) != s.key(list, 1) {
			t.Errorf("%s: the question and its key terms search apart: %v, %v", list, s.key(list, 0), s.key(list, 1))
		}
		if s.key(list, 1) == s.key(list, 2) {
			t.Errorf("%s: different queries share a search: %v", list, s.key(list, 1))
		}
	}
	if s.key(ListTitleMatch, 0) == s.key(ListTitleMatch, 1) {
		t.Errorf("title match shares a search between different texts")
	}
	if len(s.uniqueVecs) != 2 {
		t.Errorf("unique vectors = %d, want 2", len(s.uniqueVecs))
	}
}

func TestRankByPassages(t *testing.T) {
	// Page 0 won fusion on words spread over its text; page 1 holds a passage with all the question's words.
	ix := &index.Index{Chunks: []index.Chunk{
		{ID: 0, PageID: 0, Text: "the newsletter: a policy was updated. Elsewhere, seats for teams."},
		{ID: 1, PageID: 1, Text: "each team may request two registry seats."},
	}}
	r := &Retriever{ix: ix}
	pages := []scored{{0, 1.0}, {1, 0.8}, {2, 0.5}}
	cover := map[int]float64{0: 0.25, 1: 1}
	tests := []struct {
		name  string
		prior float64
		cover map[int]float64
		want  []int
	}{
		{"the page holding the passage first", 0.5, cover, []int{1, 0, 2}},
		{"no prior keeps the fused order", -1, cover, []int{0, 1, 2}},
		{"no coverage keeps the fused order", 0.5, nil, []int{0, 1, 2}},
	}
	for _, tt := range tests {
		r.cfg = Config{PassagePrior: tt.prior}.withDefaults()
		var got []int
		for _, p := range r.rankByPassages(pages, tt.cover) {
			got = append(got, p.id)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	if pages[0].id != 0 || pages[0].score != 1.0 {
		t.Errorf("rankByPassages changed its argument: %v", pages)
	}
}

func TestSelectPassagesCoverage(t *testing.T) {
	ix := &index.Index{Chunks: []index.Chunk{
		{ID: 0, PageID: 0, Text: "registry news and other items"},
		{ID: 1, PageID: 1, Text: "each team may request two registry seats"},
		{ID: 2, PageID: 1, Text: "nothing relevant here"},
	}}
	r := &Retriever{ix: ix, lex: newEmptyLexicon(), cfg: Config{}.withDefaults()}
	_, cover, err := r.selectPassages([]string{"how many registry seats per team"}, []scored{{0, 1}, {1, 0.9}, {2, 0.8}}, r.newChunkTexts())
	if err != nil {
		t.Fatal(err)
	}
	if !(cover[1] > cover[0] && cover[0] > 0) {
		t.Errorf("coverage per page = %v, want page 1's best passage above page 0's", cover)
	}
}

// The title list searches what a reader sees of a page's headings: link text without targets, no permalink
// signs, and no "#" comment lines of fenced code.
func TestPageFields(t *testing.T) {
	p := index.Page{Title: "Accounts", URL: "https://site.example/help/account-mgmt.html"}
	md := "# Accounts\n\n## [Self-serve](https://selfserve.example/tools) reset[¶](https://site.example/help/account-mgmt.html#reset)\n\n" +
		"```sh\n# reset the cache\n```\n#hashtag\n"
	want := "Accounts\n help account mgmt.html\nAccounts\nSelf-serve reset\n"
	if got := pageFields(p, md); got != want {
		t.Errorf("pageFields = %q, want %q", got, want)
	}
}
