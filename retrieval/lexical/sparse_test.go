package lexical

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSparsePinned pins vectors the Qdrant store wrote and searched with before its encoder and this one became
// one: a change here changes every synced collection's ranking, so it must be deliberate.
func TestSparsePinned(t *testing.T) {
	type vec struct {
		Indices []uint32
		Values  []float32
	}
	docs := []struct {
		text   string
		avgLen float64
		want   vec
	}{
		{"Apply to the graduate programme by March 1; the graduate office reviews applications.", 6, vec{
			[]uint32{0xc41c6b8, 0x14bc310b, 0x225772e1, 0x340ca71c, 0x625471d1, 0x7d6d9752, 0xc8bbbfce, 0xee89e0f0},
			[]float32{0.8301887, 0.8301887, 0.8301887, 0.8301887, 1.2054795, 0.8301887, 0.8301887, 0.8301887}}},
		{"Set max_connections in postgresql.conf; max_connections defaults to 100.", 12.5, vec{
			[]uint32{0x2ee91e53, 0x6733d49c, 0x933b5bde, 0x9f10b21f, 0xaae0ccf9, 0xb64cb3a9, 0xc6270703, 0xd7a2e319, 0xdc4049d7},
			[]float32{1.1293634, 1.1293634, 1.1293634, 1.4925373, 1.4925373, 1.1293634, 1.1293634, 1.4925373, 1.1293634}}},
		{"banana", 0, vec{[]uint32{0xd9889f50}, []float32{1}}},
		{"!!!", 3, vec{}},
	}
	for _, d := range docs {
		i, v := Config{}.SparseDocument(d.text, d.avgLen)
		if diff := cmp.Diff(d.want, vec{i, v}); diff != "" {
			t.Errorf("SparseDocument(%q, %v) (-want +got):\n%s", d.text, d.avgLen, diff)
		}
	}
	queries := []struct {
		text string
		want vec
	}{
		{"How many graduate applications? graduate", vec{[]uint32{0xc41c6b8, 0x625471d1, 0xd1977672}, []float32{1, 2, 1}}},
		{"max_connections default", vec{[]uint32{0x933b5bde, 0x9f10b21f, 0xaae0ccf9, 0xd7a2e319}, []float32{1, 1, 1, 1}}},
		{"the of", vec{}},
	}
	for _, q := range queries {
		i, v := Config{}.SparseQuery(q.text)
		if diff := cmp.Diff(q.want, vec{i, v}); diff != "" {
			t.Errorf("SparseQuery(%q) (-want +got):\n%s", q.text, diff)
		}
	}
}

func TestSparseDocument(t *testing.T) {
	idx, val := Config{}.SparseDocument("apple apple banana", 3)
	if len(idx) != 2 || !slices.IsSorted(idx) {
		t.Fatalf("indices %v, want 2 sorted", idx)
	}
	w := map[uint32]float32{}
	for i := range idx {
		w[idx[i]] = val[i]
	}
	apple, banana := w[TermID(Analyzer{}.Terms("apple")[0])], w[TermID(Analyzer{}.Terms("banana")[0])]
	// At average length the weight is tf·(k1+1)/(tf+k1): 2·2.2/3.2 and 1·2.2/2.2.
	if diff := cmp.Diff([]float32{2 * 2.2 / 3.2, 1}, []float32{apple, banana}, cmp.Comparer(func(a, b float32) bool { return a-b < 1e-6 && b-a < 1e-6 })); diff != "" {
		t.Errorf("weights (-want +got):\n%s", diff)
	}
	// A longer document than average weighs the same term frequency less.
	_, long := Config{}.SparseDocument("banana", 0.5)
	_, short := Config{}.SparseDocument("banana", 2)
	if !(long[0] < short[0]) {
		t.Errorf("weight in a long document %v not below a short one %v", long[0], short[0])
	}
	// Other parameters change the weights: without length normalisation (B < 0 means 0) length does not matter.
	_, long = Config{B: -1}.SparseDocument("banana", 0.5)
	_, short = Config{B: -1}.SparseDocument("banana", 2)
	if long[0] != short[0] {
		t.Errorf("with b=0 weights differ by length: %v, %v", long[0], short[0])
	}
}

func TestSparseQuery(t *testing.T) {
	// A repeated term weighs its repeats, as in the in-process BM25; the stopword "the" is no term.
	idx, val := Config{}.SparseQuery("Biology the biology minor")
	got := map[uint32]float32{}
	for i := range idx {
		got[idx[i]] = val[i]
	}
	want := map[uint32]float32{TermID("biologi"): 2, TermID("minor"): 1}
	if !slices.IsSorted(idx) {
		t.Errorf("indices %v not sorted", idx)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("weights (-want +got):\n%s", diff)
	}
}
