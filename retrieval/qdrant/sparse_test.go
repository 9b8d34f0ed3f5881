package qdrant

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Hello, World!", []string{"hello", "world"}},
		{"CS 61A: Structure & Interpretation", []string{"cs", "61a", "structure", "interpretation"}},
		{"Zürich-Öffnungszeiten", []string{"zürich", "öffnungszeiten"}},
		{"  ", nil},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, Terms(tc.in), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Terms(%q) (-want +got):\n%s", tc.in, diff)
		}
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
	apple, banana := w[termID("apple")], w[termID("banana")]
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
	idx, val := BM25Query("Biology biology minor")
	want := []uint32{termID("biology"), termID("minor")}
	slices.Sort(want)
	if diff := cmp.Diff(want, idx); diff != "" {
		t.Errorf("indices (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]float32{1, 1}, val); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
}
