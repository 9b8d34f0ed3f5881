package lexical

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var docs = []string{
	0: "The Bioengineering major requires 42 upper division units.",
	1: "Undergraduate tuition and fees for 2016-17 are $13,510 for California residents.",
	2: "Instruction begins Wednesday, August 24, 2016 for the Fall semester.",
	3: "The Cognitive Science major is a cross-disciplinary study of the mind.",
	4: "International students pay an $80 application fee; fee waivers are available.",
	5: "Contact the Office of the Registrar at 510-642-1483 or the College of L&S.",
	6: "A minimum GPA of 3.70 is required for honors in the major.",
	7: "",
}

// bruteForce scores every document with the BM25 formula directly from the analyzer's terms.
func bruteForce(docs []string, query string, cfg Config) []Hit {
	cfg = cfg.withDefaults()
	a := cfg.Analyzer
	var total float64
	tfs := make([]map[string]int, len(docs))
	lens := make([]float64, len(docs))
	df := map[string]int{}
	for i, d := range docs {
		tfs[i] = map[string]int{}
		for _, t := range a.Terms(d) {
			if tfs[i][t] == 0 {
				df[t]++
			}
			tfs[i][t]++
		}
		lens[i] = float64(a.Length(d))
		total += lens[i]
	}
	avg := total / float64(len(docs))
	n := float64(len(docs))
	var hits []Hit
	for i := range docs {
		var s float64
		for _, t := range a.Terms(query) {
			tf := float64(tfs[i][t])
			if tf == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
			s += idf * tf * (cfg.K1 + 1) / (tf + cfg.K1*(1-cfg.B+cfg.B*lens[i]/avg))
		}
		if s > 0 {
			hits = append(hits, Hit{i, s})
		}
	}
	return hits
}

var approx = cmpopts.EquateApprox(0, 1e-5)

func TestSearchMatchesFormula(t *testing.T) {
	queries := []string{
		"bioengineering units", "major", "fees tuition", "fee fee", "3.70 GPA", "510-642-1483", "L&S",
		"$13,510", "13510", "the of and", "unknownword", "majors requiring units",
	}
	for _, cfg := range []Config{{}, {K1: 2, B: 0.3}, {B: -1}, {Analyzer: Analyzer{NoStem: true, KeepStopwords: true}}} {
		b := NewBM25(docs, cfg)
		for _, q := range queries {
			want := bruteForce(docs, q, cfg)
			got := b.Search(q, 100, nil)
			sortHits(want)
			if diff := cmp.Diff(want, got, approx, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("cfg %+v query %q (-want +got):\n%s", cfg, q, diff)
			}
		}
	}
}

func sortHits(h []Hit) {
	for i := range h {
		for j := i + 1; j < len(h); j++ {
			if worse(h[i], h[j]) {
				h[i], h[j] = h[j], h[i]
			}
		}
	}
}

func TestSearch(t *testing.T) {
	b := NewBM25(docs, Config{})
	tests := []struct {
		name   string
		query  string
		k      int
		filter func(int) bool
		want   []int
	}{
		{"stemmed", "bioengineering majors", 10, nil, []int{0, 6, 3}}, // 6 is shorter than 3
		{"top 1", "bioengineering majors", 1, nil, []int{0}},
		{"filter", "bioengineering majors", 10, func(d int) bool { return d != 0 }, []int{6, 3}},
		{"price", "how much is $13,510", 10, nil, []int{1}},
		{"phone", "510-642-1483", 10, nil, []int{5}},
		{"gpa", "3.7 gpa", 10, nil, []int{6}},
		{"ampersand", "l&s college", 10, nil, []int{5}},
		{"stopwords only", "what is the", 10, nil, nil},
		{"k zero", "major", 0, nil, nil},
		{"empty", "", 10, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int
			for _, h := range b.Search(tt.query, tt.k, tt.filter) {
				got = append(got, h.Doc)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Search(%q) docs (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

// TestSearchCodeNames checks that a code name is a term of its own besides its parts, which do not tell the
// passage that names it from those that use its words, and that it does not lengthen its document.
func TestSearchCodeNames(t *testing.T) {
	docs := []string{
		0: "Type checking: a type checker checks each type of the program, type by type, when checking runs.",
		1: "typing.TYPE_CHECKING is a constant that is False at run time.",
		2: "Set max_connections to allow more connections; each connection uses memory.",
		3: "The maximum number of connections is set at start.",
	}
	b := NewBM25(docs, Config{})
	for q, want := range map[string]int{"what is TYPE_CHECKING set to at runtime": 1, "default max_connections": 2} {
		hits := b.Search(q, 10, nil)
		if len(hits) == 0 || hits[0].Doc != want {
			t.Errorf("Search(%q) = %v, want doc %d first", q, hits, want)
		}
		if diff := cmp.Diff(bruteForce(docs, q, Config{}), hits, approx, cmpopts.SortSlices(func(a, b Hit) bool { return a.Doc < b.Doc })); diff != "" {
			t.Errorf("Search(%q) differs from the formula (-formula +got):\n%s", q, diff)
		}
	}
	var a Analyzer
	if got, want := a.Terms("os.path.join()"), []string{"os", "path", "join", "os.path.join", "path.join"}; !cmp.Equal(got, want) {
		t.Errorf("Terms = %q, want %q", got, want)
	}
	if got := a.Length("use os.path.join() here"); got != 4 {
		t.Errorf("Length = %d, want 4 (the words' terms)", got)
	}
}

func TestSearchTiesByDoc(t *testing.T) {
	b := NewBM25([]string{"alpha beta", "gamma", "alpha beta", "alpha beta"}, Config{})
	got := b.Search("alpha", 2, nil)
	if len(got) != 2 || got[0].Doc != 0 || got[1].Doc != 2 || got[0].Score != got[1].Score {
		t.Errorf("Search = %+v, want docs 0 and 2 with equal scores", got)
	}
}

func TestSearchConcurrent(t *testing.T) {
	b := NewBM25(docs, Config{})
	want := b.Search("major units fee", 10, nil)
	done := make(chan []Hit)
	for range 8 {
		go func() { done <- b.Search("major units fee", 10, nil) }()
	}
	for range 8 {
		if diff := cmp.Diff(want, <-done); diff != "" {
			t.Errorf("concurrent search differs (-want +got):\n%s", diff)
		}
	}
}

func TestSparseReproducesBM25(t *testing.T) {
	b := NewBM25(docs, Config{})
	for _, q := range []string{"bioengineering majors units", "fee fee tuition", "510-642-1483 l&s", "nothing known"} {
		qi, qv := b.SparseQuery(q)
		byDoc := map[int]float64{}
		for _, h := range b.Search(q, 100, nil) {
			byDoc[h.Doc] = h.Score
		}
		for d, text := range docs {
			di, dv := b.DocSparse(text)
			if !isSortedUnique(di) || !isSortedUnique(qi) {
				t.Fatalf("indices not sorted and unique: %v %v", qi, di)
			}
			var dot float64
			for i, j := 0, 0; i < len(qi) && j < len(di); {
				switch {
				case qi[i] < di[j]:
					i++
				case qi[i] > di[j]:
					j++
				default:
					dot += float64(qv[i]) * float64(dv[j])
					i++
					j++
				}
			}
			if math.Abs(dot-byDoc[d]) > 1e-4 {
				t.Errorf("query %q doc %d: sparse dot %.5f, BM25 %.5f", q, d, dot, byDoc[d])
			}
		}
	}
}

func isSortedUnique(s []uint32) bool {
	for i := 1; i < len(s); i++ {
		if s[i] <= s[i-1] {
			return false
		}
	}
	return true
}

func TestTermID(t *testing.T) {
	// FNV-1a 32 reference values: the ids are part of the stored sparse vectors and must never change.
	for term, want := range map[string]uint32{"": 0x811c9dc5, "a": 0xe40c292c, "foobar": 0xbf9cf968} {
		if got := TermID(term); got != want {
			t.Errorf("TermID(%q) = %#x, want %#x", term, got, want)
		}
	}
}

func TestAnalyzer(t *testing.T) {
	tests := []struct {
		a    Analyzer
		in   string
		want []string
	}{
		{Analyzer{}, "The students' requirements: 3.70 GPA, $13,510!", []string{"student", "requir", "3.7", "gpa", "13510"}},
		{Analyzer{NoStem: true}, "The requirements", []string{"requirements"}},
		{Analyzer{KeepStopwords: true}, "The requirements", []string{"the", "requir"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.a.Terms(tt.in)); diff != "" {
			t.Errorf("%+v.Terms(%q) (-want +got):\n%s", tt.a, tt.in, diff)
		}
	}
}

func FuzzSearch(f *testing.F) {
	for _, q := range []string{"bioengineering", "$13,510", "l&s", "", "fee fee fee"} {
		f.Add(q, 3)
	}
	b := NewBM25(docs, Config{})
	f.Fuzz(func(t *testing.T, q string, k int) {
		k = k % 20
		hits := b.Search(q, k, nil)
		if len(hits) > max(k, 0) {
			t.Fatalf("%d hits for k=%d", len(hits), k)
		}
		for i, h := range hits {
			if h.Doc < 0 || h.Doc >= len(docs) || !(h.Score > 0) {
				t.Fatalf("bad hit %+v", h)
			}
			if i > 0 && worse(hits[i-1], h) {
				t.Fatalf("hits out of order: %+v", hits)
			}
		}
	})
}

// TestSearchIn checks that searching a set of documents gives what Search filtered to them gives.
func TestSearchIn(t *testing.T) {
	docs, qs := syntheticCorpus(3000, 50)
	b := NewBM25(docs, Config{})
	for _, every := range []int{1, 7, 97, 2999} {
		var in []int
		set := map[int]bool{}
		for d := 3; d < len(docs); d += every {
			in = append(in, d)
			set[d] = true
		}
		for _, q := range qs {
			for _, k := range []int{1, 10, 128} {
				want := b.Search(q, k, func(d int) bool { return set[d] })
				got := b.SearchIn(q, k, in)
				if !cmp.Equal(want, got, cmpopts.EquateEmpty()) {
					t.Fatalf("every %d, %q, k %d: SearchIn = %v, want %v", every, q, k, got, want)
				}
			}
		}
	}
	if got := b.SearchIn(qs[0], 10, nil); got != nil {
		t.Errorf("SearchIn over no documents = %v", got)
	}
}
