package vector

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"sync"
)

// IVF is an inverted-file index (the inverted file with a k-means coarse quantizer of Jégou, Douze and Schmid,
// "Product Quantization for Nearest Neighbor Search", IEEE TPAMI 33(1), 2011, without its product-quantized
// residuals: the vectors are scored exactly): the vectors are clustered by k-means, each cluster's members form a list, and a search scores the query against
// the cluster centroids, then exactly against the members of the nprobe nearest lists only. A search thus reads
// about nprobe/lists of the vectors instead of all of them.
//
// The clustering is spherical k-means (Dhillon and Modha, "Concept Decompositions for Large Sparse Text Data
// Using Clustering", Machine Learning 42, 2001: centroids are normalised means and members are assigned by
// cosine similarity), seeded by k-means++ (Arthur and Vassilvitskii, "k-means++: The Advantages of Careful
// Seeding", SODA 2007) and trained on a fixed-seed sample of the vectors, so the same rows and configuration
// always build the same index.
//
// Collections smaller than IVFConfig.MinRows get no lists: an IVF over them searches exactly, as Flat does.
//
// An IVF is immutable once built and safe for concurrent searches.
type IVF struct {
	flat      *Flat
	centroids []float32 // lists*dim, row-major, unit length
	offsets   []uint32  // lists+1: list l holds ids[offsets[l]:offsets[l+1]]
	ids       []uint32  // row ids grouped by list, ascending within a list
	grouped   []float32 // when not nil, the rows in the order of ids (row ids[p] at p*dim)
	probe     int
}

var _ Index = (*IVF)(nil)

// IVFConfig tunes NewIVF. The zero value gives the defaults, chosen on the local embedder's 256-dimensional
// vectors of 213,200 chunks (see BenchmarkIVFVectors).
type IVFConfig struct {
	// Lists is the number of clusters; 0 means DefaultIVFLists(n).
	Lists int
	// Probe is the number of nearest lists a search reads; 0 means DefaultIVFProbe(lists).
	Probe int
	// Sample is the number of rows k-means trains on (0: 32768); every row is then assigned to its nearest
	// centroid.
	Sample int
	// Iterations is the number of k-means (Lloyd) iterations after seeding (0: 4; on the 213,200 chunk vectors
	// 8 and 12 iterations gave the same recall as 4, at 0.4 s of CPU each).
	Iterations int
	// Seed seeds the sample and the k-means++ seeding (0 is a valid seed).
	Seed uint64
	// InPlace makes searches read the rows passed to NewIVF or ReadIVF where they are instead of a copy of them
	// grouped by list. The copy is as large as the rows (208 MiB for 213,200 rows of 256); without it an IVF
	// holds about 4 bytes a row beyond the centroids, but the probed rows are scattered over the collection and
	// a search costs 3 to 4 times as much CPU: at the default probe on those rows, more than an exact scan.
	InPlace bool
	// MinRows is the smallest collection that gets lists (0: IVFMinRows); smaller ones are searched exactly.
	// A negative value builds lists whatever the size (for tests).
	MinRows int
}

// IVFMinRows is the default IVFConfig.MinRows. Below it an exact scan is cheap enough that an approximate one is
// not worth its lost recall and its build: Flat searches 21,253 vectors of 256 dimensions in 0.4 ms of CPU per
// query (0.3 ms each for three queries at once), so about 1 ms at 50,000, against 6.5 ms at 213,200. Over those
// 21,253 vectors 256 lists need a probe of 128 (half the rows) for recall@40 0.95 on embedded questions, which
// saves 0.2 ms a query.
const IVFMinRows = 50_000

// DefaultIVFLists is the default number of lists for n vectors: the power of two between 64 and 4096 nearest to
// 2*sqrt(n). For 213,200 rows that is 1024, whose searches read about half as many rows as over 512 lists for
// the same recall; the build costs about 5.6 s of CPU, against 3.4 s for 512 lists.
func DefaultIVFLists(n int) int {
	s := 2 * math.Sqrt(float64(n))
	l := 64
	for l < 4096 && float64(l)*math.Sqrt2 < s {
		l *= 2
	}
	return l
}

// DefaultIVFProbe is the default number of lists a search reads out of lists: one in four, at least 8. On the
// local embedder's vectors of 213,200 chunks over 1024 lists that reads 29% of the rows and keeps recall@40 and
// recall@128 at 0.97 or more for embedded questions, the hardest queries measured (their neighbours are the
// least similar to them and the most spread over lists); page summary vectors reach 0.95 reading 8% (a probe of
// one list in sixteen), which a caller whose queries are like them can choose with WithProbe.
func DefaultIVFProbe(lists int) int {
	return min(lists, max(8, lists/4))
}

func (c IVFConfig) withDefaults(n int) IVFConfig {
	if c.MinRows == 0 {
		c.MinRows = IVFMinRows
	}
	if c.Lists <= 0 {
		c.Lists = DefaultIVFLists(n)
	}
	if c.Sample <= 0 {
		c.Sample = 32768
	}
	if c.Iterations <= 0 {
		c.Iterations = 4
	}
	return c
}

// NewIVF clusters rows (of equal length, unit length, not changed afterwards; used in place when consecutive
// parts of one array, as NewFlat) and builds the lists.
func NewIVF(rows [][]float32, cfg IVFConfig) (*IVF, error) {
	flat, err := NewFlat(rows)
	if err != nil {
		return nil, err
	}
	if flat.n > math.MaxUint32 {
		return nil, fmt.Errorf("vector: %d rows, at most %d for an IVF", flat.n, uint32(math.MaxUint32))
	}
	cfg = cfg.withDefaults(flat.n)
	x := &IVF{flat: flat}
	if flat.n == 0 || (cfg.MinRows > 0 && flat.n < cfg.MinRows) {
		return x, nil
	}
	lists := min(cfg.Lists, flat.n)
	x.centroids = trainCentroids(flat, lists, min(cfg.Sample, flat.n), cfg.Iterations, cfg.Seed)
	assign := make([]uint32, flat.n)
	assignAll(flat.data, flat.dim, x.centroids, assign, nil)
	x.offsets = make([]uint32, lists+1)
	for _, l := range assign {
		x.offsets[l+1]++
	}
	for l := range lists {
		x.offsets[l+1] += x.offsets[l]
	}
	x.ids = make([]uint32, flat.n)
	next := append([]uint32(nil), x.offsets[:lists]...)
	for i, l := range assign {
		x.ids[next[l]] = uint32(i)
		next[l]++
	}
	x.setProbe(cfg.Probe)
	if !cfg.InPlace {
		x.group()
	}
	return x, nil
}

func (x *IVF) setProbe(p int) {
	if p <= 0 {
		p = DefaultIVFProbe(x.Lists())
	}
	x.probe = max(1, min(p, x.Lists()))
}

// group fills x.grouped, the copy of the rows in list order.
func (x *IVF) group() {
	dim := x.flat.dim
	x.grouped = make([]float32, len(x.ids)*dim)
	for p, id := range x.ids {
		copy(x.grouped[p*dim:(p+1)*dim], x.flat.data[int(id)*dim:(int(id)+1)*dim])
	}
}

// row returns the vector at position p of the lists, row id.
func (x *IVF) row(p int, id uint32) []float32 {
	dim := x.flat.dim
	if x.grouped != nil {
		return x.grouped[p*dim : (p+1)*dim]
	}
	return x.flat.data[int(id)*dim : (int(id)+1)*dim]
}

// trainCentroids runs spherical k-means with k-means++ seeding on a fixed-seed sample of the rows.
func trainCentroids(f *Flat, k, sampleSize, iterations int, seed uint64) []float32 {
	dim := f.dim
	rng := rand.New(rand.NewPCG(seed, 0x1f3a_5b7c_9d2e_4f60))
	// A partial Fisher-Yates shuffle picks the sample; it is then put back in row order so that it reads the
	// rows forwards.
	perm := make([]int, f.n)
	for i := range perm {
		perm[i] = i
	}
	for i := range sampleSize {
		j := i + rng.IntN(f.n-i)
		perm[i], perm[j] = perm[j], perm[i]
	}
	pick := perm[:sampleSize]
	sort.Ints(pick)
	sample := make([]float32, sampleSize*dim)
	for i, id := range pick {
		copy(sample[i*dim:(i+1)*dim], f.data[id*dim:(id+1)*dim])
	}
	row := func(i int) []float32 { return sample[i*dim : (i+1)*dim] }

	// k-means++: each next centre is a sample row drawn with probability proportional to its squared distance
	// to the nearest centre so far (for unit vectors 2-2cos).
	centroids := make([]float32, 0, k*dim)
	d2 := make([]float64, sampleSize)
	first := rng.IntN(sampleSize)
	centroids = append(centroids, row(first)...)
	var total float64
	for i := range sampleSize {
		d2[i] = max(0, 2-2*float64(Dot(row(i), row(first))))
		total += d2[i]
	}
	for c := 1; c < k; c++ {
		next := -1
		if total > 0 {
			t := rng.Float64() * total
			for i, d := range d2 {
				if t < d {
					next = i
					break
				}
				t -= d
			}
		}
		if next < 0 { // rounding, or every row already a centre: the farthest row
			next = 0
			for i, d := range d2 {
				if d > d2[next] {
					next = i
				}
			}
		}
		centre := row(next)
		centroids = append(centroids, centre...)
		total = 0
		for i := range sampleSize {
			if d := max(0, 2-2*float64(Dot(row(i), centre))); d < d2[i] {
				d2[i] = d
			}
			total += d2[i]
		}
	}

	// Lloyd iterations: assign every sample row to its most similar centroid, then move each centroid to the
	// normalised mean of its members. An empty cluster takes the row least similar to its own centroid.
	assign := make([]uint32, sampleSize)
	sims := make([]float32, sampleSize)
	sums := make([]float64, k*dim)
	counts := make([]int, k)
	for range iterations {
		assignAll(sample, dim, centroids, assign, sims)
		clear(sums)
		clear(counts)
		for i, c := range assign {
			counts[c]++
			s := sums[int(c)*dim : (int(c)+1)*dim]
			for j, v := range row(i) {
				s[j] += float64(v)
			}
		}
		taken := make([]bool, sampleSize)
		for c := range k {
			s := sums[c*dim : (c+1)*dim]
			if counts[c] == 0 {
				worst := -1
				for i, sim := range sims {
					if !taken[i] && (worst < 0 || sim < sims[worst]) {
						worst = i
					}
				}
				if worst < 0 {
					continue
				}
				taken[worst] = true
				for j, v := range row(worst) {
					s[j] = float64(v)
				}
			}
			var norm float64
			for _, v := range s {
				norm += v * v
			}
			if norm == 0 {
				continue // keep the previous centroid
			}
			norm = math.Sqrt(norm)
			dst := centroids[c*dim : (c+1)*dim]
			for j, v := range s {
				dst[j] = float32(v / norm)
			}
		}
	}
	return centroids
}

// assignAll sets assign[i] to the centroid most similar to row i of data (ties: the smaller centroid), and
// sims[i] to that similarity when sims is not nil. The rows are split among GOMAXPROCS goroutines; each row's
// answer is independent of the split.
func assignAll(data []float32, dim int, centroids []float32, assign []uint32, sims []float32) {
	n, k := len(assign), len(centroids)/dim
	workers := max(1, min(runtime.GOMAXPROCS(0), n/1024))
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				r := data[i*dim : (i+1)*dim]
				best, bestSim := 0, float32(math.Inf(-1))
				for c := range k {
					if s := Dot(r, centroids[c*dim:(c+1)*dim]); s > bestSim {
						best, bestSim = c, s
					}
				}
				assign[i] = uint32(best)
				if sims != nil {
					sims[i] = bestSim
				}
			}
		})
	}
	wg.Wait()
}

// Len returns the number of vectors.
func (x *IVF) Len() int { return x.flat.n }

// Dim returns the vector length (0 for an empty index).
func (x *IVF) Dim() int { return x.flat.dim }

// Lists returns the number of lists; 0 when the index searches exactly.
func (x *IVF) Lists() int { return len(x.centroids) / max(1, x.flat.dim) }

// Probe returns the number of lists a search reads.
func (x *IVF) Probe() int { return x.probe }

// Flat returns the exact index over the same rows.
func (x *IVF) Flat() *Flat { return x.flat }

// WithProbe returns an index sharing x's lists whose searches read the nprobe nearest lists (clamped to
// [1, Lists()]); x is unchanged.
func (x *IVF) WithProbe(nprobe int) *IVF {
	y := *x
	y.setProbe(max(1, nprobe))
	return &y
}

func (x *IVF) String() string {
	return fmt.Sprintf("vector.IVF{n: %d, dim: %d, lists: %d, probe: %d}", x.flat.n, x.flat.dim, x.Lists(), x.probe)
}

// Search implements Index: SearchMultiFilter for one query.
func (x *IVF) Search(q []float32, k int, filter func(id int) bool) []Hit {
	return x.SearchMultiFilter([][]float32{q}, k, filter)[0]
}

// SearchMulti is SearchMultiFilter without a filter.
func (x *IVF) SearchMulti(qs [][]float32, k int) [][]Hit { return x.SearchMultiFilter(qs, k, nil) }

// SearchMultiFilter returns, for each query, up to k of the vectors for which filter returns true (all when it
// is nil), best first, ties by smaller ID, as Flat.SearchMultiFilter does, but scoring only the members of the
// Probe() lists whose centroids are most similar to the query: the hits are exact dot products, the set they
// are drawn from is approximate. Lists probed by several queries are read once for all of them; each query's
// hits are those Search would return for it alone.
//
// Probing goes on, list by list in order of similarity, while fewer than k vectors have been scored, and, with
// a filter, while fewer have been accepted than the probed lists would have held without it: a filter that
// keeps a share p of the vectors makes a search read about 1/p times as many lists, up to all of them (a
// filtered exact scan), so that its recall stays close to the unfiltered one. The filter may be called more than
// once for a vector (once per query reading it past the first Probe() lists).
func (x *IVF) SearchMultiFilter(qs [][]float32, k int, filter func(id int) bool) [][]Hit {
	lists := x.Lists()
	if lists == 0 {
		return x.flat.SearchMultiFilter(qs, k, filter)
	}
	out := make([][]Hit, len(qs))
	dim := x.flat.dim
	if k <= 0 || len(qs) == 0 {
		return out
	}
	for _, q := range qs {
		if len(q) != dim {
			return out
		}
	}
	// Each query's lists in order of similarity; only the first probe are needed unless probing goes on.
	order := make([][]uint32, len(qs))
	scores := make([]float32, lists)
	for j, q := range qs {
		for l := range lists {
			scores[l] = Dot(q, x.centroids[l*dim:(l+1)*dim])
		}
		order[j] = rankLists(scores)
	}
	// The first probe lists of every query, read in list order with the queries that probe each.
	type probe struct{ list, query uint32 }
	probes := make([]probe, 0, len(qs)*x.probe)
	for j := range qs {
		for _, l := range order[j][:x.probe] {
			probes = append(probes, probe{l, uint32(j)})
		}
	}
	sort.Slice(probes, func(a, b int) bool {
		if probes[a].list != probes[b].list {
			return probes[a].list < probes[b].list
		}
		return probes[a].query < probes[b].query
	})
	tops := make([]*topK, len(qs))
	scored := make([]int, len(qs)) // vectors accepted and scored per query
	want := make([]int, len(qs))   // vectors to score before stopping
	for j := range qs {
		tops[j] = newTopK(min(k, x.flat.n))
		want[j] = k
		if filter != nil {
			held := 0
			for _, l := range order[j][:x.probe] {
				held += int(x.offsets[l+1] - x.offsets[l])
			}
			want[j] = max(k, held)
		}
	}
	var group []uint32
	for a := 0; a < len(probes); {
		l := probes[a].list
		group = group[:0]
		for ; a < len(probes) && probes[a].list == l; a++ {
			group = append(group, probes[a].query)
		}
		lo, hi := int(x.offsets[l]), int(x.offsets[l+1])
		if x.grouped != nil && filter == nil && len(group) == 1 {
			// The common case, one query reading a list of the grouped copy, without the general loop's
			// indirections.
			j := group[0]
			q, top, block := qs[j], tops[j], x.grouped[lo*dim:hi*dim]
			for i, id := range x.ids[lo:hi] {
				s := Dot(q, block[i*dim:(i+1)*dim])
				if !top.full() || s >= top.h[0].Score {
					top.push(Hit{ID: int(id), Score: s})
				}
			}
			scored[j] += hi - lo
			continue
		}
		for p := lo; p < hi; p++ {
			id := x.ids[p]
			if filter != nil && !filter(int(id)) {
				continue
			}
			row := x.row(p, id)
			for _, j := range group {
				tops[j].push(Hit{ID: int(id), Score: Dot(qs[j], row)})
				scored[j]++
			}
		}
	}
	for j, q := range qs {
		for _, l := range order[j][x.probe:] {
			if scored[j] >= want[j] {
				break
			}
			for p := int(x.offsets[l]); p < int(x.offsets[l+1]); p++ {
				id := x.ids[p]
				if filter != nil && !filter(int(id)) {
					continue
				}
				tops[j].push(Hit{ID: int(id), Score: Dot(q, x.row(p, id))})
				scored[j]++
			}
		}
		out[j] = tops[j].sorted()
	}
	return out
}

// rankLists returns the lists by decreasing score, ties by smaller list.
func rankLists(scores []float32) []uint32 {
	type ranked struct {
		score float32
		list  uint32
	}
	rs := make([]ranked, len(scores))
	for l, s := range scores {
		rs[l] = ranked{s, uint32(l)}
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return cmp.Compare(a.list, b.list)
	})
	order := make([]uint32, len(rs))
	for i, r := range rs {
		order[i] = r.list
	}
	return order
}
