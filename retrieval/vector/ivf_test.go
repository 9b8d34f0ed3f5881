package vector

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// flatRecall returns the mean share of Flat's top k (the same float32 scores and ties) that x returns.
func flatRecall(x *IVF, queries [][]float32, k int, filter func(int) bool) float64 {
	want := x.Flat().SearchMultiFilter(queries, k, filter)
	got := x.SearchMultiFilter(queries, k, filter)
	var found, total int
	for i := range want {
		in := map[int]bool{}
		for _, h := range got[i] {
			in[h.ID] = true
		}
		for _, h := range want[i] {
			if in[h.ID] {
				found++
			}
		}
		total += len(want[i])
	}
	return float64(found) / float64(total)
}

// checkHits fails unless hits are valid for q: exact scores of rows passing filter, best first, ties by ID.
func checkHits(t *testing.T, rows [][]float32, q []float32, hits []Hit, filter func(int) bool) {
	t.Helper()
	for j, h := range hits {
		if h.Score != Dot(q, rows[h.ID]) || (j > 0 && !worse(h, hits[j-1])) || (filter != nil && !filter(h.ID)) {
			t.Fatalf("hit %d = %+v is not an exact, accepted hit in order", j, h)
		}
	}
}

// topics returns n unit vectors of length dim around centres random centres (topics of about n/centres rows,
// like the chunks of a site's sections), plus m queries drawn the same way. Deterministic for a seed.
func topics(seed int64, n, m, dim, centres int) (rows, queries [][]float32) {
	r := rand.New(rand.NewSource(seed))
	cs := make([][]float32, centres)
	for i := range cs {
		cs[i] = randomUnit(r, dim, nil, 0)
	}
	for i := range n + m {
		v := randomUnit(r, dim, cs[r.Intn(len(cs))], 0.5)
		if i < n {
			rows = append(rows, v)
		} else {
			queries = append(queries, v)
		}
	}
	return rows, queries
}

// TestIVFRecall checks the default configuration on a clustered collection above IVFMinRows.
func TestIVFRecall(t *testing.T) {
	rows, queries := topics(21, 60_000, 100, 32, 120)
	x, err := NewIVF(rows, IVFConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if x.Len() != len(rows) || x.Lists() != DefaultIVFLists(len(rows)) || x.Probe() != DefaultIVFProbe(x.Lists()) {
		t.Fatalf("%v: want %d rows, default lists and probe", x, len(rows))
	}
	for _, k := range []int{10, 40, 128} {
		r := flatRecall(x, queries, k, nil)
		t.Logf("%v: recall@%d %.3f", x, k, r)
		if r < 0.95 {
			t.Errorf("recall@%d = %.3f, want >= 0.95", k, r)
		}
	}
	for _, q := range queries[:10] {
		checkHits(t, rows, q, x.Search(q, 40, nil), nil)
	}
	// Reading every list is an exact search.
	all := x.WithProbe(x.Lists())
	if r := flatRecall(all, queries[:20], 40, nil); r != 1 {
		t.Errorf("recall@40 probing every list = %.3f, want 1", r)
	}
	if x.Probe() != DefaultIVFProbe(x.Lists()) {
		t.Error("WithProbe changed the original index")
	}
}

func smallIVF(t testing.TB) (rows, queries [][]float32, x *IVF) {
	rows, queries = clustered(22, 3000, 20, 16)
	x, err := NewIVF(rows, IVFConfig{Lists: 40, Probe: 10, MinRows: -1})
	if err != nil {
		t.Fatal(err)
	}
	return rows, queries, x
}

func TestIVFFilter(t *testing.T) {
	rows, queries, x := smallIVF(t)
	// A filter keeping 1 row in 50 makes the search read lists until as many rows are accepted as the probed
	// lists hold: here all of them, so the hits are the exact filtered ones.
	rare := func(id int) bool { return id%50 == 3 }
	for _, q := range queries {
		want := x.Flat().Search(q, 10, rare)
		if diff := cmp.Diff(want, x.Search(q, 10, rare)); diff != "" {
			t.Fatalf("selective filter (-flat +ivf):\n%s", diff)
		}
	}
	half := func(id int) bool { return id%2 == 0 }
	if r := flatRecall(x, queries, 40, half); r < 0.95 {
		t.Errorf("recall@40 with a filter keeping half = %.3f, want >= 0.95", r)
	}
	for _, q := range queries {
		checkHits(t, rows, q, x.Search(q, 40, half), half)
	}
	none := func(int) bool { return false }
	if hits := x.Search(queries[0], 10, none); len(hits) != 0 {
		t.Errorf("a filter rejecting all: %v", hits)
	}
	// Fewer rows in the probed lists than k: probing goes on until k rows are scored.
	one := x.WithProbe(1)
	if hits := one.Search(queries[0], 500, nil); len(hits) != 500 {
		t.Errorf("k=500 with one probed list: %d hits", len(hits))
	}
}

func TestIVFMultiMatchesSearch(t *testing.T) {
	_, queries, x := smallIVF(t)
	odd := func(id int) bool { return id%2 == 1 }
	for _, filter := range []func(int) bool{nil, odd} {
		got := x.SearchMultiFilter(queries, 15, filter)
		for i, q := range queries {
			if diff := cmp.Diff(x.Search(q, 15, filter), got[i]); diff != "" {
				t.Fatalf("query %d (-Search +SearchMultiFilter):\n%s", i, diff)
			}
		}
	}
	if diff := cmp.Diff(x.SearchMultiFilter(queries, 15, nil), x.SearchMulti(queries, 15)); diff != "" {
		t.Error("SearchMulti differs from SearchMultiFilter without a filter")
	}
	// The grouped copy and the rows in place answer alike.
	rows, _ := clustered(22, 3000, 0, 16)
	y, _ := NewIVF(rows, IVFConfig{Lists: 40, Probe: 10, MinRows: -1, InPlace: true})
	if y.grouped != nil {
		t.Fatal("InPlace kept a copy of the rows")
	}
	if diff := cmp.Diff(x.SearchMulti(queries, 15), y.SearchMulti(queries, 15)); diff != "" {
		t.Errorf("in place (-grouped +in place):\n%s", diff)
	}
}

func TestIVFSmallIsExact(t *testing.T) {
	rows, queries := clustered(23, 2000, 10, 16)
	x, err := NewIVF(rows, IVFConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if x.Lists() != 0 {
		t.Fatalf("%v: %d rows below IVFMinRows got lists", x, len(rows))
	}
	odd := func(id int) bool { return id%2 == 1 }
	if diff := cmp.Diff(x.Flat().SearchMultiFilter(queries, 40, odd), x.SearchMultiFilter(queries, 40, odd)); diff != "" {
		t.Errorf("(-flat +ivf):\n%s", diff)
	}
}

func TestIVFEdgeCases(t *testing.T) {
	_, queries, x := smallIVF(t)
	if got := x.SearchMulti(queries, 0); len(got) != len(queries) || len(got[0]) != 0 {
		t.Errorf("k=0: %v", got)
	}
	if got := x.SearchMulti([][]float32{{1, 0}}, 5); len(got[0]) != 0 {
		t.Errorf("wrong dimension: %v", got)
	}
	if got := x.Search(queries[0], 10_000, nil); len(got) != x.Len() {
		t.Errorf("k above n: %d hits, want %d", len(got), x.Len())
	}
	empty, err := NewIVF(nil, IVFConfig{MinRows: -1})
	if err != nil || empty.Len() != 0 || len(empty.Search([]float32{1}, 3, nil)) != 0 {
		t.Errorf("empty: %v, %v", empty, err)
	}
	if _, err := NewIVF([][]float32{{1, 0}, {1}}, IVFConfig{}); !errors.Is(err, ErrDimension) {
		t.Errorf("ragged rows: %v", err)
	}
	// More lists than rows: one list a row at most.
	tiny, err := NewIVF([][]float32{{1, 0}, {0, 1}, {0.6, 0.8}}, IVFConfig{Lists: 10, MinRows: -1})
	if err != nil || tiny.Lists() != 3 || len(tiny.Search([]float32{1, 0}, 3, nil)) != 3 {
		t.Errorf("tiny: %v, %v", tiny, err)
	}
}

func TestIVFDeterministic(t *testing.T) {
	rows, _, x := smallIVF(t)
	y, _ := NewIVF(rows, IVFConfig{Lists: 40, Probe: 10, MinRows: -1})
	a, _ := x.MarshalBinary()
	b, _ := y.MarshalBinary()
	if !bytes.Equal(a, b) {
		t.Error("two builds of the same rows differ")
	}
	z, _ := NewIVF(rows, IVFConfig{Lists: 40, Probe: 10, MinRows: -1, Seed: 5})
	c, _ := z.MarshalBinary()
	if bytes.Equal(a, c) {
		t.Error("another seed built the same lists")
	}
}

func TestIVFBinaryRoundTrip(t *testing.T) {
	rows, queries, x := smallIVF(t)
	data, err := x.AppendBinary([]byte("prefix"))
	if err != nil {
		t.Fatal(err)
	}
	data = data[len("prefix"):]
	odd := func(id int) bool { return id%2 == 1 }
	for name, read := range map[string]func([]byte, [][]float32) (*IVF, error){"ReadIVF": ReadIVF, "ReadIVFInPlace": ReadIVFInPlace} {
		y, err := read(data, rows)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if y.Lists() != x.Lists() || y.Probe() != x.Probe() || (y.grouped == nil) != (name == "ReadIVFInPlace") {
			t.Errorf("%s: %v, want %v", name, y, x)
		}
		for _, filter := range []func(int) bool{nil, odd} {
			if diff := cmp.Diff(x.SearchMultiFilter(queries, 40, filter), y.SearchMultiFilter(queries, 40, filter)); diff != "" {
				t.Errorf("%s: (-built +read):\n%s", name, diff)
			}
		}
		again, _ := y.MarshalBinary()
		if !bytes.Equal(again, data) {
			t.Errorf("%s: marshalling the read index differs", name)
		}
	}
	// An exact index (below MinRows) round-trips too.
	e, _ := NewIVF(rows, IVFConfig{})
	edata, _ := e.MarshalBinary()
	f, err := ReadIVF(edata, rows)
	if err != nil || f.Lists() != 0 {
		t.Fatalf("exact: %v, %v", f, err)
	}
	if diff := cmp.Diff(e.Search(queries[0], 10, nil), f.Search(queries[0], 10, nil)); diff != "" {
		t.Errorf("exact (-built +read):\n%s", diff)
	}
}

// reseal recomputes the checksum of an edited binary form.
func reseal(data []byte) []byte {
	data = bytes.Clone(data)
	binary.LittleEndian.PutUint32(data[len(data)-4:], crc32.Checksum(data[:len(data)-4], castagnoli))
	return data
}

func TestReadIVFRejects(t *testing.T) {
	rows, _, x := smallIVF(t)
	data, _ := x.MarshalBinary()
	idsAt := len(data) - 4 - 4*len(rows)
	edit := func(off int, v uint32) []byte {
		d := bytes.Clone(data)
		binary.LittleEndian.PutUint32(d[off:], v)
		return reseal(d)
	}
	h := len(ivfMagic)
	cases := map[string][]byte{
		"empty":             nil,
		"header only":       data[:ivfHeaderSize],
		"truncated":         data[:len(data)-1],
		"one byte more":     append(bytes.Clone(data), 0),
		"bad magic":         append([]byte("ragpxIVG"), data[h:]...),
		"flipped bit":       func() []byte { d := bytes.Clone(data); d[idsAt+5] ^= 1; return d }(),
		"version 2":         edit(h, 2),
		"huge lists":        edit(h+12, 1<<31),
		"huge dim":          edit(h+8, 1<<31),
		"zero probe":        edit(h+16, 0),
		"probe above lists": edit(h+16, 41),
		"sizes off":         edit(ivfHeaderSize+4*40*16, 0),
		"id out of range":   edit(idsAt, uint32(len(rows))),
		"id repeated":       edit(idsAt+4, binary.LittleEndian.Uint32(data[idsAt:])),
		"nan centroid":      edit(ivfHeaderSize, 0x7fc00000),
	}
	for name, d := range cases {
		if _, err := ReadIVF(d, rows); !errors.Is(err, ErrCorruptIVF) {
			t.Errorf("%s: %v, want ErrCorruptIVF", name, err)
		}
	}
	// Every prefix is rejected.
	for n := range len(data) {
		if _, err := ReadIVF(data[:n], rows); err == nil {
			t.Fatalf("a prefix of %d bytes was accepted", n)
		}
	}
	// Random edits behind a valid checksum are rejected or give a working index, never a panic.
	r := rand.New(rand.NewSource(25))
	for range 3000 {
		d := bytes.Clone(data)
		for range 1 + r.Intn(3) {
			off := r.Intn(len(d) - 4)
			if r.Intn(2) == 0 {
				d[off] = byte(r.Intn(256))
			} else if off%4 == 0 {
				binary.LittleEndian.PutUint32(d[off:], uint32(r.Intn(len(rows)+2)))
			}
		}
		if y, err := ReadIVF(reseal(d), rows); err == nil {
			y.Search(rows[0], 10, nil)
		}
	}
	// The rows must match the index's count and length.
	if _, err := ReadIVF(data, rows[:len(rows)-1]); err == nil {
		t.Error("fewer rows accepted")
	}
	short := make([][]float32, len(rows))
	for i := range short {
		short[i] = rows[i][:8]
	}
	if _, err := ReadIVF(data, short); !errors.Is(err, ErrDimension) {
		t.Errorf("shorter rows: %v, want ErrDimension", err)
	}
}

func FuzzReadIVF(f *testing.F) {
	rows, _ := clustered(24, 200, 0, 4)
	x, err := NewIVF(rows, IVFConfig{Lists: 8, MinRows: -1})
	if err != nil {
		f.Fatal(err)
	}
	data, _ := x.MarshalBinary()
	f.Add(data)
	f.Add(data[:ivfHeaderSize+4])
	f.Fuzz(func(t *testing.T, data []byte) {
		y, err := ReadIVF(data, rows)
		if err != nil {
			return
		}
		// An accepted form is a partition of the rows and marshals back to itself.
		again, _ := y.MarshalBinary()
		if !bytes.Equal(again, data) {
			t.Fatal("accepted data does not marshal back to itself")
		}
		y.Search(rows[0], 5, nil)
	})
}

func TestIVFConcurrentSearch(t *testing.T) {
	_, queries, x := smallIVF(t)
	want := x.SearchMulti(queries, 20)
	done := make(chan string, len(queries))
	for i, q := range queries {
		go func() { done <- cmp.Diff(want[i], x.Search(q, 20, nil)) }()
	}
	for range queries {
		if diff := <-done; diff != "" {
			t.Errorf("concurrent search (-serial +concurrent):\n%s", diff)
		}
	}
}

// TestIVFGrouped checks that an IVF read over a grouped copy held by the caller searches as the one built, and
// that a copy of other rows, or of another length, is refused.
func TestIVFGrouped(t *testing.T) {
	rows, queries, x := smallIVF(t)
	data, err := x.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var grouped []float32
	if err := x.EachGrouped(func(row []float32) error { grouped = append(grouped, row...); return nil }); err != nil {
		t.Fatal(err)
	}
	y, err := ReadIVFGrouped(data, rows, grouped)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(x.SearchMultiFilter(queries, 40, nil), y.SearchMultiFilter(queries, 40, nil)); diff != "" {
		t.Errorf("grouped by the caller (-built +read):\n%s", diff)
	}
	if _, err := ReadIVFGrouped(data, rows, grouped[:len(grouped)-1]); !errors.Is(err, ErrCorruptIVF) {
		t.Errorf("a short grouped copy: %v", err)
	}
	other := slices.Clone(grouped)
	other[0] += 0.5
	if _, err := ReadIVFGrouped(data, rows, other); !errors.Is(err, ErrCorruptIVF) {
		t.Errorf("a grouped copy of other rows: %v", err)
	}
}
