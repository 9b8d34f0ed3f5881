package vector

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/internal/corpustest"
)

// readF32 reads a vectors file as the index stores them: rows and dim as little-endian uint32, then rows*dim
// little-endian float32. The rows are consecutive parts of one array, as the index loads them.
func readF32(tb testing.TB, path string) [][]float32 {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if len(data) < 8 {
		tb.Fatalf("%s: %d bytes", path, len(data))
	}
	n, dim := int(binary.LittleEndian.Uint32(data)), int(binary.LittleEndian.Uint32(data[4:]))
	if len(data) != 8+4*n*dim {
		tb.Fatalf("%s: %d bytes for %d rows of %d", path, len(data), n, dim)
	}
	all := make([]float32, n*dim)
	for i := range all {
		all[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[8+4*i:]))
	}
	rows := make([][]float32, n)
	for i := range rows {
		rows[i] = all[i*dim : (i+1)*dim]
	}
	return rows
}

// vectorQueries are the queries of the benchmarks over stored vectors: 200 rows spread evenly over the
// collection, the same rows with noise added (similarity about 0.9 to the row), and 200 page summary vectors
// when the summaries file is given, which are not rows and stand for questions about a page.
func vectorQueries(rows, summaries [][]float32) map[string][][]float32 {
	const m = 200
	r := rand.New(rand.NewSource(11))
	qs := map[string][][]float32{}
	for i := range m {
		row := rows[(2*i+1)*len(rows)/(2*m)]
		qs["rows"] = append(qs["rows"], row)
		qs["noisy"] = append(qs["noisy"], randomUnit(r, len(row), row, 0.45))
	}
	if len(summaries) > 0 {
		for i := range min(m, len(summaries)) {
			qs["summaries"] = append(qs["summaries"], summaries[(2*i+1)*len(summaries)/(2*m)])
		}
	}
	return qs
}

// overlap returns the share of want's IDs found in got.
func overlap(got, want []Hit) (found, total int) {
	in := make(map[int]bool, len(got))
	for _, h := range got {
		in[h.ID] = true
	}
	for _, h := range want {
		if in[h.ID] {
			found++
		}
	}
	return found, len(want)
}

func envInts(name string, def []int) []int {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err == nil {
			out = append(out, v)
		}
	}
	return out
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkIVFVectors compares Flat and IVF on stored vectors: set RAGPROXY_TEST_VECTORS to a chunks.f32 file
// (summaries.f32 beside it is used for queries too). RAGPROXY_IVF_LISTS and RAGPROXY_IVF_PROBES (comma
// separated) override the lists and probes tried, RAGPROXY_IVF_ITERATIONS the k-means iterations, and
// RAGPROXY_IVF_INPLACE (when set) makes the IVF search the rows in place. It reports the build's CPU time and memory, and per
// configuration the CPU time per query vector for calls with 1 and 3 vectors, at k=40 and k=128, with recall
// against Flat of each query set.
func BenchmarkIVFVectors(b *testing.B) {
	path := os.Getenv("RAGPROXY_TEST_VECTORS")
	if path == "" {
		b.Skip("RAGPROXY_TEST_VECTORS is not set")
	}
	rows := readF32(b, path)
	var summaries [][]float32
	if sp := filepath.Join(filepath.Dir(path), "summaries.f32"); fileExists(sp) {
		summaries = readF32(b, sp)
	}
	flat, err := NewFlat(rows)
	if err != nil {
		b.Fatal(err)
	}
	sets := vectorQueries(rows, summaries)
	names := []string{"rows", "noisy", "summaries", "questions"}
	if qs := questionVectors(b, filepath.Join(filepath.Dir(path), "embedder.bin")); len(qs) > 0 {
		sets["questions"] = qs
	}
	var all [][]float32
	for _, name := range names {
		all = append(all, sets[name]...)
	}
	ks := []int{40, 128}
	truth := map[int]map[string][][]Hit{}
	for _, k := range ks {
		truth[k] = map[string][][]Hit{}
		for _, name := range names {
			truth[k][name] = flat.SearchMulti(sets[name], k)
		}
	}
	b.Logf("%d rows of %d, %d queries", len(rows), len(rows[0]), len(all))

	latency := func(b *testing.B, idx interface {
		SearchMultiFilter([][]float32, int, func(int) bool) [][]Hit
	}, k, per int) {
		b.ReportAllocs()
		start := corpustest.CPUTime()
		i := 0
		for b.Loop() {
			lo := (i * per) % (len(all) - per + 1)
			idx.SearchMultiFilter(all[lo:lo+per], k, nil)
			i++
		}
		b.ReportMetric(float64(corpustest.CPUTime()-start)/1e6/float64(b.N*per), "cpu-ms/query")
	}
	for _, per := range []int{1, 3} {
		for _, k := range ks {
			b.Run(fmt.Sprintf("flat/n=%d/q=%d/k=%d", len(rows), per, k), func(b *testing.B) { latency(b, flat, k, per) })
		}
	}

	inPlace := os.Getenv("RAGPROXY_IVF_INPLACE") != ""
	for _, lists := range envInts("RAGPROXY_IVF_LISTS", []int{DefaultIVFLists(len(rows))}) {
		before := heapInUse()
		start := corpustest.CPUTime()
		iters := envInts("RAGPROXY_IVF_ITERATIONS", []int{0})[0]
		x, err := NewIVF(rows, IVFConfig{Lists: lists, InPlace: inPlace, Iterations: iters, MinRows: -1})
		if err != nil {
			b.Fatal(err)
		}
		build := float64(corpustest.CPUTime()-start) / 1e9
		mem := float64(heapInUse()-before) / (1 << 20)
		sizes := make([]int, 0, x.Lists())
		for l := range x.Lists() {
			sizes = append(sizes, int(x.offsets[l+1]-x.offsets[l]))
		}
		slices.Sort(sizes)
		b.Logf("lists=%d in place=%v: build %.2f s CPU, %.1f MiB beyond the rows; list sizes min %d median %d max %d",
			x.Lists(), inPlace, build, mem, sizes[0], sizes[len(sizes)/2], sizes[len(sizes)-1])
		bin, err := x.MarshalBinary()
		if err != nil {
			b.Fatal(err)
		}
		start = corpustest.CPUTime()
		read, err := readIVF(bin, rows, inPlace)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("lists=%d: binary form %.2f MiB, read in %.0f ms CPU", x.Lists(), float64(len(bin))/(1<<20),
			float64(corpustest.CPUTime()-start)/1e6)
		if !slices.EqualFunc(x.SearchMulti(all[:50], 40), read.SearchMulti(all[:50], 40), slices.Equal) {
			b.Fatal("the index read back answers differently")
		}
		probes := envInts("RAGPROXY_IVF_PROBES", []int{x.Probe() / 2, x.Probe(), 2 * x.Probe()})
		for _, p := range probes {
			y := x.WithProbe(p)
			for _, k := range ks {
				var msg []string
				for _, name := range names {
					if len(sets[name]) == 0 {
						continue
					}
					got := y.SearchMulti(sets[name], k)
					var f, t int
					for i := range got {
						a, c := overlap(got[i], truth[k][name][i])
						f, t = f+a, t+c
					}
					msg = append(msg, fmt.Sprintf("%s %.3f", name, float64(f)/float64(t)))
				}
				b.Logf("lists=%d probe=%d recall@%d: %s", x.Lists(), p, k, strings.Join(msg, ", "))
			}
			var read int
			for _, q := range all {
				read += y.scanned(q, 40)
			}
			b.Logf("lists=%d probe=%d: a query reads %.1f%% of the rows", x.Lists(), p, 100*float64(read)/float64(len(all)*len(rows)))
			for _, per := range []int{1, 3} {
				for _, k := range ks {
					b.Run(fmt.Sprintf("ivf/lists=%d/probe=%d/q=%d/k=%d", x.Lists(), p, per, k), func(b *testing.B) {
						latency(b, y, k, per)
					})
				}
			}
		}
	}
}

// questionVectors embeds the dev questions (RAGPROXY_TEST_EVAL) with the local embedder state at path; none
// when either is missing.
func questionVectors(tb testing.TB, path string) [][]float32 {
	if os.Getenv("RAGPROXY_TEST_EVAL") == "" {
		return nil
	}
	state, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	l := embedding.NewLocal(embedding.LocalConfig{})
	if err := l.UnmarshalBinary(state); err != nil {
		tb.Logf("embedder state: %v", err)
		return nil
	}
	return embedQuestions(tb, l)
}

// embedQuestions embeds the dev questions (corpustest.Questions) with e.
func embedQuestions(tb testing.TB, e embedding.Embedder) [][]float32 {
	var texts []string
	for _, q := range corpustest.Questions(tb) {
		texts = append(texts, q.Question)
	}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		tb.Fatal(err)
	}
	return vecs
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// scanned returns the number of rows an unfiltered search for q reads.
func (x *IVF) scanned(q []float32, k int) int {
	if x.Lists() == 0 {
		return x.flat.n
	}
	dim := x.flat.dim
	scores := make([]float32, x.Lists())
	for l := range scores {
		scores[l] = Dot(q, x.centroids[l*dim:(l+1)*dim])
	}
	n := 0
	for i, l := range rankLists(scores) {
		if i >= x.probe && n >= k {
			break
		}
		n += int(x.offsets[l+1] - x.offsets[l])
	}
	return n
}
