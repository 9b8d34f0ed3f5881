package fusion

import (
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestRRF(t *testing.T) {
	tests := []struct {
		name     string
		lists    [][]int
		k        float64
		rankBase int
		want     []Scored
	}{
		{
			name: "usual k 60 from rank 1", lists: [][]int{{1, 2, 3}, {3, 1}}, k: K60, rankBase: 1,
			want: []Scored{{1, 1.0/61 + 1.0/62}, {3, 1.0/63 + 1.0/61}, {2, 1.0 / 62}},
		},
		{
			// The FHNW prototype: K = number of lists (3), ranks from 0.
			name: "prototype", lists: [][]int{{7, 8}, {8, 9}, {9, 7}}, k: 3, rankBase: 0,
			want: []Scored{{7, 1.0/3 + 1.0/4}, {8, 1.0/4 + 1.0/3}, {9, 1.0/4 + 1.0/3}},
		},
		{
			name: "ties keep first appearance, list by list", lists: [][]int{{5, 4}, {4, 5}, {6}}, k: 60, rankBase: 1,
			want: []Scored{{5, 1.0/61 + 1.0/62}, {4, 1.0/62 + 1.0/61}, {6, 1.0 / 61}},
		},
		{
			name: "duplicates within a list count once", lists: [][]int{{1, 1, 2}}, k: 60, rankBase: 1,
			want: []Scored{{1, 1.0 / 61}, {2, 1.0 / 63}},
		},
		{
			name: "two second places beat one first place at small k", lists: [][]int{{1}, {2, 3}, {4, 3}}, k: 1, rankBase: 1,
			want: []Scored{{3, 1.0/3 + 1.0/3}, {1, 0.5}, {2, 0.5}, {4, 0.5}},
		},
		{name: "empty", lists: nil, k: 60, rankBase: 1, want: nil},
		{name: "empty lists", lists: [][]int{{}, nil}, k: 60, rankBase: 1, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RRF(tt.lists, tt.k, tt.rankBase)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("RRF(%v, %v, %d) (-want +got):\n%s", tt.lists, tt.k, tt.rankBase, diff)
			}
		})
	}
}

func TestIDs(t *testing.T) {
	s := []Scored{{3, 1}, {1, 0.5}, {2, 0.1}}
	for n, want := range map[int][]int{-1: {3, 1, 2}, 0: {}, 2: {3, 1}, 9: {3, 1, 2}} {
		if diff := cmp.Diff(want, IDs(s, n)); diff != "" {
			t.Errorf("IDs(s, %d) (-want +got):\n%s", n, diff)
		}
	}
}

func FuzzRRF(f *testing.F) {
	f.Add(int64(1), 3, 60.0, 1)
	f.Fuzz(func(t *testing.T, seed int64, nLists int, k float64, base int) {
		if nLists < 0 || nLists > 8 || !(k > 0 && k < 1e6) || base < 0 || base > 10 {
			return
		}
		r := rand.New(rand.NewSource(seed))
		lists := make([][]int, nLists)
		items := map[int]bool{}
		for i := range lists {
			for range r.Intn(20) {
				id := r.Intn(30)
				lists[i] = append(lists[i], id)
				items[id] = true
			}
		}
		got := RRF(lists, k, base)
		if len(got) != len(items) {
			t.Fatalf("%d fused items, %d distinct inputs", len(got), len(items))
		}
		for i := 1; i < len(got); i++ {
			if got[i].Score > got[i-1].Score {
				t.Fatalf("not sorted: %v", got)
			}
		}
		if diff := cmp.Diff(got, RRF(lists, k, base)); diff != "" {
			t.Fatalf("not deterministic: %s", diff)
		}
	})
}

func BenchmarkRRF(b *testing.B) {
	// The FHNW prototype's page stage: 4 queries x (dense 36 + BM25 36) lists.
	r := rand.New(rand.NewSource(1))
	lists := make([][]int, 8)
	for i := range lists {
		lists[i] = r.Perm(780)[:36]
	}
	b.ReportAllocs()
	for b.Loop() {
		RRF(lists, K60, 1)
	}
}

func TestWeightedRRF(t *testing.T) {
	lists := [][]int{{1, 2}, {2, 1}}
	// Equal weights tie 1 and 2; ties keep first appearance.
	if diff := cmp.Diff([]int{1, 2}, IDs(WeightedRRF(lists, []float64{1, 1}, 1, 0), -1)); diff != "" {
		t.Errorf("equal weights (-want +got):\n%s", diff)
	}
	// A heavier second list puts its top item first.
	got := WeightedRRF(lists, []float64{0.5, 1}, 1, 0)
	if diff := cmp.Diff([]Scored{{ID: 2, Score: 0.5/2 + 1.0/1}, {ID: 1, Score: 0.5/1 + 1.0/2}}, got); diff != "" {
		t.Errorf("weighted (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(RRF(lists, 60, 1), WeightedRRF(lists, nil, 60, 1)); diff != "" {
		t.Errorf("nil weights differ from RRF (-RRF +weighted):\n%s", diff)
	}
}
