package embedding

import (
	"math"

	"github.com/ragproxy/ragproxy/textnorm"
)

// A word's features are computed once per worker and cached: vocabularies are Zipfian, so after the first few
// hundred texts almost every word is a cache hit and embedding costs one map lookup per word plus one
// multiply-add per feature.

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// Feature kinds, hashed first so a stem and an n-gram with the same bytes stay distinct features.
const (
	kindStem byte = 's'
	kindGram byte = 'g'
)

type feat struct {
	out uint32  // output dimension
	w   float32 // signed weight including IDF
}

type span struct{ off, n uint32 }

type workerState struct {
	l        *Local
	fit      bool              // collect IDF buckets (fitFeats)
	vec      bool              // collect output features (feats)
	ids      map[uint64]uint32 // FNV-1a of the word -> id; 64-bit collisions are negligible at vocabulary sizes
	entries  []span
	feats    []feat   // embedding features, by entries
	fitFeats []uint32 // IDF buckets, by entries (fit only)
	counts   []int32  // per word id, for the current text
	touched  []uint32
	gram     []byte
	word     []byte
}

// stopID marks stopwords in workerState.ids, so a word costs one map lookup whether it is a stopword or not.
const stopID = ^uint32(0)

func newWorkerState(l *Local, fit bool, words int) *workerState {
	return &workerState{l: l, fit: fit, vec: !fit, ids: make(map[uint64]uint32, words)}
}

// countWords counts the non-stopword words of text, read in lang (nil: English), into counts/touched.
func (st *workerState) countWords(text string, lang *textnorm.Language) {
	// A word's features depend on its language, so each language's words have cache keys of their own; English
	// keeps the plain hash of the word.
	seed := uint64(fnvOffset)
	if lang != nil {
		text = lang.Normalize(text)
		seed = hashString(hashByte(seed, 0), lang.Tag())
	}
	st.word = textnorm.AppendWords(st.word, text, func(w []byte) bool {
		h := seed
		for _, c := range w {
			h = (h ^ uint64(c)) * fnvPrime
		}
		id, ok := st.ids[h]
		if !ok {
			if lang.IsStopword(string(w)) {
				st.ids[h] = stopID
				return true
			}
			id = st.add(h, string(w), lang)
		}
		if id == stopID {
			return true
		}
		if st.counts[id] == 0 {
			st.touched = append(st.touched, id)
		}
		st.counts[id]++
		return true
	})
}

func (st *workerState) resetCounts() {
	for _, id := range st.touched {
		st.counts[id] = 0
	}
	st.touched = st.touched[:0]
}

// embed writes text's vector into v (zeroed, Dimension long).
func (st *workerState) embed(text string, lang *textnorm.Language, v []float32) {
	st.countWords(text, lang)
	for _, id := range st.touched {
		tf := float32(1 + math.Log(float64(st.counts[id])))
		e := st.entries[id]
		for _, f := range st.feats[e.off : e.off+e.n] {
			v[f.out] += tf * f.w
		}
	}
	st.resetCounts()
	normalize(v)
}

// add computes and caches the features of word w, read in lang (nil: English), and returns its id.
func (st *workerState) add(h uint64, w string, lang *textnorm.Language) uint32 {
	// Bound the cache so a pathological batch (random strings) cannot grow it without limit.
	// FitEmbed (fit and vec) keeps ids of earlier texts, so its cache is never reset.
	if len(st.entries) >= 1<<20 && len(st.touched) == 0 && !(st.fit && st.vec) {
		st.ids = make(map[uint64]uint32, 1024)
		st.entries, st.feats, st.fitFeats = st.entries[:0], st.feats[:0], st.fitFeats[:0]
		st.counts, st.touched = st.counts[:0], st.touched[:0]
	}
	id := uint32(len(st.entries))
	st.ids[h] = id
	st.counts = append(st.counts, 0)
	// A span counts base features when fitting (one IDF bucket each) and output features otherwise (cfg.Hashes
	// per base feature); in the combined mode of FitEmbed output feature j belongs to IDF bucket j/Hashes.
	off, n := len(st.feats), 0
	if st.fit {
		off = len(st.fitFeats)
	}
	st.features(w, lang)
	if st.fit {
		n = len(st.fitFeats) - off
	} else {
		n = len(st.feats) - off
	}
	st.entries = append(st.entries, span{uint32(off), uint32(n)})
	return id
}

// features appends the features of word w: its stem with weight 1 and, unless it is a number, its boundary-marked
// character n-grams sharing cfg.GramWeight of L2 mass. In a language other than English (lang) the word itself,
// case folded, stands for the stem: BM25 already brings a word's inflections together with the language's
// Snowball stemmer, the n-grams bring them near here, and on the Debian Reference's German and French questions
// the embedder found more with words kept whole (see the README's section on languages). A word holding Chinese,
// Japanese or Korean runs has one term of weight 1 for each of their character bigrams
// (textnorm.Language.WordTerms) in place of a stem and n-grams: its bytes cut three to five at a time are single
// characters and fragments of them, which every page of the language shares.
func (st *workerState) features(w string, lang *textnorm.Language) {
	cfg := st.l.cfg
	if lang == nil {
		st.emit(hashString(hashByte(fnvOffset, kindStem), textnorm.Stem(w)), 1)
	} else {
		lang.WordTerms(w, textnorm.Options{KeepStopwords: true, NoStem: true}, func(term string) {
			st.emit(hashString(hashByte(fnvOffset, kindStem), term), 1)
		})
		if textnorm.ScriptLanguage(w) != "" {
			return
		}
	}
	if textnorm.IsNumeric(w) {
		return
	}
	st.gram = append(append(append(st.gram[:0], '<'), w...), '>')
	g := st.gram
	count := 0
	for n := cfg.MinGram; n <= cfg.MaxGram; n++ {
		if len(g) >= n {
			count += len(g) - n + 1
		}
	}
	if count == 0 {
		return
	}
	weight := cfg.GramWeight / float32(math.Sqrt(float64(count)))
	for n := cfg.MinGram; n <= cfg.MaxGram; n++ {
		for i := 0; i+n <= len(g); i++ {
			h := hashByte(fnvOffset, kindGram)
			for _, c := range g[i : i+n] {
				h = hashByte(h, c)
			}
			st.emit(h, weight)
		}
	}
}

func (st *workerState) emit(h uint64, weight float32) {
	cfg := st.l.cfg
	bucket := uint32(h % uint64(cfg.IDFBuckets))
	if st.fit {
		st.fitFeats = grow(st.fitFeats, 1)
		st.fitFeats = append(st.fitFeats, bucket)
	}
	if !st.vec {
		return
	}
	st.feats = grow(st.feats, cfg.Hashes)
	// Each feature is spread over cfg.Hashes signed buckets: a collision with another feature then moves the
	// dot product by a fraction of the feature's weight instead of all of it, which matters most for short texts.
	// The IDF factor is applied last so FitEmbed, which learns it after collecting features, computes the very
	// same floats.
	weight /= float32(math.Sqrt(float64(cfg.Hashes)))
	idf := float32(1)
	if st.l.idf != nil && !st.fit {
		idf = st.l.idf[bucket]
	}
	m := h
	for range cfg.Hashes {
		m = mix(m)
		w := weight
		if m>>63 == 1 {
			w = -w
		}
		st.feats = append(st.feats, feat{out: uint32((m & math.MaxUint32) % uint64(cfg.Dimension)), w: w * idf})
	}
}

func hashByte(h uint64, c byte) uint64 { return (h ^ uint64(c)) * fnvPrime }

func hashString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

// mix is the splitmix64 finaliser; it derives the output bucket and sign from bits independent of the IDF bucket.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// grow makes room for n more elements, doubling the capacity: the feature tables of a corpus grow to tens of
// megabytes, and append's gentler growth for large slices copied them over and over.
func grow[T any](s []T, n int) []T {
	if len(s)+n <= cap(s) {
		return s
	}
	t := make([]T, len(s), max(2*cap(s), len(s)+n, 1024))
	copy(t, s)
	return t
}
