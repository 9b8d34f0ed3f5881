package qdrant

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ragproxy/ragproxy/retrieval/lexical"
)

// TestTerms checks that the sparse vectors weigh the in-process BM25's terms: stems, stopwords dropped.
func TestTerms(t *testing.T) {
	for _, in := range []string{"Hello, World!", "CS 61A: Structure & Interpretation of the Programs", "Zürich-Öffnungszeiten", "  "} {
		if diff := cmp.Diff(lexical.Analyzer{}.Terms(in), Terms(in), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Terms(%q) (-lexical +sparse):\n%s", in, diff)
		}
	}
	if diff := cmp.Diff([]string{"cs", "61a", "structur", "interpret", "program"}, Terms("CS 61A: Structure & Interpretation of the Programs")); diff != "" {
		t.Errorf("Terms (-want +got):\n%s", diff)
	}
}

func TestBM25Document(t *testing.T) {
	idx, val := BM25Document("apple apple banana", 3)
	if len(idx) != 2 || !slices.IsSorted(idx) {
		t.Fatalf("indices %v, want 2 sorted", idx)
	}
	w := map[uint32]float32{}
	for i := range idx {
		w[idx[i]] = val[i]
	}
	apple, banana := w[termID(Terms("apple")[0])], w[termID(Terms("banana")[0])]
	// At average length the weight is tf·(k1+1)/(tf+k1): 2·2.2/3.2 and 1·2.2/2.2.
	if diff := cmp.Diff([]float32{2 * 2.2 / 3.2, 1}, []float32{apple, banana}, cmp.Comparer(func(a, b float32) bool { return a-b < 1e-6 && b-a < 1e-6 })); diff != "" {
		t.Errorf("weights (-want +got):\n%s", diff)
	}
	// A longer document than average weighs the same term frequency less.
	_, long := BM25Document("banana", 0.5)
	_, short := BM25Document("banana", 2)
	if !(long[0] < short[0]) {
		t.Errorf("weight in a long document %v not below a short one %v", long[0], short[0])
	}
	if idx, val := BM25Document("!!!", 3); idx != nil || val != nil {
		t.Errorf("empty document = %v, %v", idx, val)
	}
}

func TestBM25Query(t *testing.T) {
	// A repeated term weighs its repeats, as in the in-process BM25; the stopword "the" is no term.
	idx, val := BM25Query("Biology the biology minor")
	got := map[uint32]float32{}
	for i := range idx {
		got[idx[i]] = val[i]
	}
	want := map[uint32]float32{termID(Terms("biology")[0]): 2, termID(Terms("minor")[0]): 1}
	if !slices.IsSorted(idx) {
		t.Errorf("indices %v not sorted", idx)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("weights (-want +got):\n%s", diff)
	}
}
