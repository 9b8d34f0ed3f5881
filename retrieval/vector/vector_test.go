package vector

import (
	"errors"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// clustered returns n unit vectors of length dim around n/50+1 random centres, the shape real embeddings have
// (topics), plus m queries drawn the same way. Deterministic for a seed.
func clustered(seed int64, n, m, dim int) (rows, queries [][]float32) {
	r := rand.New(rand.NewSource(seed))
	centres := make([][]float32, n/50+1)
	for i := range centres {
		centres[i] = randomUnit(r, dim, nil, 0)
	}
	gen := func() []float32 { return randomUnit(r, dim, centres[r.Intn(len(centres))], 0.5) }
	for range n {
		rows = append(rows, gen())
	}
	for range m {
		queries = append(queries, gen())
	}
	return rows, queries
}

// randomUnit returns a random unit vector, mixed with centre (weight 1-noise) when centre is not nil.
func randomUnit(r *rand.Rand, dim int, centre []float32, noise float64) []float32 {
	v := make([]float32, dim)
	var s float64
	for i := range v {
		x := r.NormFloat64() / math.Sqrt(float64(dim))
		if centre != nil {
			x = (1-noise)*float64(centre[i]) + noise*x
		}
		v[i] = float32(x)
		s += x * x
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(s))
	}
	return v
}

// exact ranks every row by a float64 dot product.
func exact(rows [][]float32, q []float32, k int, filter func(int) bool) []int {
	type s struct {
		id    int
		score float64
	}
	var all []s
	for i, r := range rows {
		if filter != nil && !filter(i) {
			continue
		}
		var d float64
		for j := range r {
			d += float64(r[j]) * float64(q[j])
		}
		all = append(all, s{i, d})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].score > all[j].score })
	var ids []int
	for i := 0; i < k && i < len(all); i++ {
		ids = append(ids, all[i].id)
	}
	return ids
}

func ids(hits []Hit) []int {
	var out []int
	for _, h := range hits {
		out = append(out, h.ID)
	}
	return out
}

func TestDot(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 1024} {
		a, b := make([]float32, n), make([]float32, n)
		var want float64
		for i := range a {
			a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			want += float64(a[i]) * float64(b[i])
		}
		if got := Dot(a, b); math.Abs(float64(got)-want) > 1e-3*math.Max(1, math.Abs(want)) {
			t.Errorf("Dot over %d = %v, want %v", n, got, want)
		}
	}
}

func TestFlatMatchesExact(t *testing.T) {
	rows, queries := clustered(1, 500, 20, 37)
	f, err := NewFlat(rows)
	if err != nil {
		t.Fatal(err)
	}
	even := func(i int) bool { return i%2 == 0 }
	for qi, q := range queries {
		for _, k := range []int{1, 10, 600} {
			for _, filter := range []func(int) bool{nil, even} {
				got := f.Search(q, k, filter)
				if diff := cmp.Diff(exact(rows, q, k, filter), ids(got)); diff != "" {
					t.Fatalf("query %d k %d (-want +got):\n%s", qi, k, diff)
				}
				for i, h := range got {
					if math.Abs(float64(h.Score-Dot(q, rows[h.ID]))) > 1e-6 || (i > 0 && worse(got[i-1], h)) {
						t.Fatalf("bad hit %d: %+v", i, h)
					}
				}
			}
		}
	}
}

func TestFlatTiesByID(t *testing.T) {
	f, _ := NewFlat([][]float32{{1, 0}, {0, 1}, {1, 0}, {1, 0}})
	if diff := cmp.Diff([]Hit{{0, 1}, {2, 1}}, f.Search([]float32{1, 0}, 2, nil)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestFlatSearchIDs(t *testing.T) {
	rows, queries := clustered(2, 300, 5, 16)
	f, _ := NewFlat(rows)
	cand := []int{5, 17, 17, 250, 299, -1, 300, 42, 120}
	in := map[int]bool{5: true, 17: true, 250: true, 299: true, 42: true, 120: true}
	for _, q := range queries {
		want := exact(rows, q, 4, func(i int) bool { return in[i] })
		if diff := cmp.Diff(want, ids(f.SearchIDs(q, 4, cand))); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	}
}

func TestEdgeCases(t *testing.T) {
	if _, err := NewFlat([][]float32{{1, 0}, {1}}); !errors.Is(err, ErrDimension) {
		t.Errorf("ragged rows: error %v, want ErrDimension", err)
	}
	if _, err := NewFlat([][]float32{{}}); !errors.Is(err, ErrDimension) {
		t.Errorf("empty row: error %v, want ErrDimension", err)
	}
	empty, err := NewFlat(nil)
	if err != nil || empty.Len() != 0 || empty.Search([]float32{1}, 3, nil) != nil {
		t.Errorf("empty Flat: %v %v", empty, err)
	}
	f, _ := NewFlat([][]float32{{1, 0}})
	for name, hits := range map[string][]Hit{
		"wrong query length": f.Search([]float32{1, 0, 0}, 3, nil),
		"k zero":             f.Search([]float32{1, 0}, 0, nil),
		"filter rejects all": f.Search([]float32{1, 0}, 3, func(int) bool { return false }),
	} {
		if len(hits) != 0 {
			t.Errorf("%s: %v, want no hits", name, hits)
		}
	}
}

func TestConcurrentSearch(t *testing.T) {
	rows, queries := clustered(6, 1000, 8, 32)
	f, _ := NewFlat(rows)
	want := make([][]Hit, len(queries))
	for i, q := range queries {
		want[i] = f.Search(q, 10, nil)
	}
	done := make(chan string, len(queries))
	for i, q := range queries {
		go func() {
			// Flat is exact and deterministic.
			done <- cmp.Diff(want[i], f.Search(q, 10, nil))
		}()
	}
	for range len(queries) {
		if msg := <-done; msg != "" {
			t.Errorf("concurrent search: %s", msg)
		}
	}
}

func TestSearchMultiMatchesSearch(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	rows := make([][]float32, 300)
	for i := range rows {
		rows[i] = make([]float32, 16)
		for j := range rows[i] {
			rows[i][j] = rng.Float32() - 0.5
		}
	}
	f, err := NewFlat(rows)
	if err != nil {
		t.Fatal(err)
	}
	qs := [][]float32{rows[3], rows[100], rows[299]}
	got := f.SearchMulti(qs, 7)
	for i, q := range qs {
		if diff := cmp.Diff(f.Search(q, 7, nil), got[i]); diff != "" {
			t.Errorf("query %d (-Search +SearchMulti):\n%s", i, diff)
		}
	}
	// Filtered, the best accepted vectors, even where the unfiltered best are all rejected.
	odd := func(id int) bool { return id%2 == 1 }
	got = f.SearchMultiFilter(qs, 7, odd)
	for i, q := range qs {
		want := f.Search(q, 7, odd)
		if len(want) != 7 {
			t.Fatalf("query %d: %d filtered hits", i, len(want))
		}
		if diff := cmp.Diff(want, got[i]); diff != "" {
			t.Errorf("query %d filtered (-Search +SearchMultiFilter):\n%s", i, diff)
		}
	}
}

// TestFlatSharesContiguousRows checks that rows laid out in one array (as index.Load reads them) are used in
// place, and that other rows are copied.
func TestFlatSharesContiguousRows(t *testing.T) {
	slab := []float32{1, 0, 0, 1, 0.6, 0.8}
	rows := [][]float32{slab[0:2], slab[2:4], slab[4:6]}
	f, err := NewFlat(rows)
	if err != nil {
		t.Fatal(err)
	}
	if &f.Vector(0)[0] != &slab[0] || &f.Vector(2)[1] != &slab[5] {
		t.Error("contiguous rows were copied")
	}
	apart := [][]float32{{1, 0}, {0, 1}}
	g, _ := NewFlat(apart)
	if &g.Vector(0)[0] == &apart[0][0] {
		t.Error("rows from separate arrays must be copied")
	}
	if got := g.Search([]float32{0, 1}, 1, nil); len(got) != 1 || got[0].ID != 1 {
		t.Errorf("search over copied rows = %+v", got)
	}
	// Rows in one array but out of order are not consecutive: copied.
	swapped := [][]float32{slab[2:4], slab[0:2]}
	h, _ := NewFlat(swapped)
	if &h.Vector(0)[0] == &slab[2] {
		t.Error("rows out of order must be copied")
	}
	if h.Vector(1)[0] != 1 {
		t.Errorf("row 1 = %v, want [1 0]", h.Vector(1))
	}
}
