package embedding

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/ragproxy/ragproxy/textnorm"
)

// Local is a lexical-semantic hashing embedder. Each word of a text (textnorm.Words, stopwords dropped)
// contributes two kinds of features: its Porter stem, and the character n-grams (MinGram to MaxGram bytes) of the
// word wrapped in boundary markers ("<units>"). Features are hashed with 64-bit FNV-1a (fixed, so vectors are
// identical across processes and machines) into Dimension signed buckets, weighted by sublinear term frequency
// (1 + ln tf) and by an IDF learned from a corpus (FitLocal), and the vector is L2-normalised. On a site in
// other languages than English (LocalConfig.Languages) each text is read in its own language instead.
//
// What it captures: shared words and their inflections (stemming), and shared spellings, so misspellings
// ("bioengneering"), abbreviations that are prefixes ("div" for "division", "undergrad") and compound forms still
// land near the right texts. What it does not capture: synonyms, paraphrase or meaning ("tuition" and "fees" are
// unrelated to it unless they co-occur in the text). Pair it with BM25 and rank fusion, or configure an
// OpenAI-compatible embedding model for semantic similarity.
//
// A Local is immutable after construction and safe for concurrent use. Its state (configuration and IDF table)
// round-trips through MarshalBinary and UnmarshalBinary.
type Local struct {
	cfg  LocalConfig
	docs uint64    // corpus size the IDF was fitted on; 0 means unfitted (every IDF is 1)
	idf  []float32 // IDFBuckets entries, nil when unfitted
}

var _ Embedder = (*Local)(nil)

// LocalConfig configures a Local embedder. The zero value selects every default.
type LocalConfig struct {
	// Dimension is the vector length. Default 256: on the Berkeley questions 256 and 1024 retrieve alike (eval),
	// and exact search over 20k chunks is four times cheaper.
	Dimension int
	// MinGram and MaxGram bound the character n-gram lengths, in bytes. Defaults 3 and 5.
	MinGram, MaxGram int
	// GramWeight is the L2 mass of a word's n-gram features relative to its stem feature (1). Default 1.
	GramWeight float32
	// Hashes is the number of signed output buckets each feature is spread over. Default 2.
	Hashes int
	// IDFBuckets is the number of hashed buckets the IDF table has; larger means fewer collisions between
	// features. Default 1<<18.
	IDFBuckets int
	// Languages are a site's languages (primary subtags, its main language first) when any is not English: each
	// text is then read in the language it tells among them (see textLanguage), its main language when it does
	// not tell (a short question, as retrieval analyses it), with that language's stopwords, its words whole (see
	// features) and its Chinese, Japanese and Korean runs as character bigrams. Default nil, as for a site whose
	// pages are all English: every text is read as English (Porter stems, English stopwords), and the vectors
	// are those of embedders built before languages were told apart.
	Languages []string
}

func (c LocalConfig) withDefaults() LocalConfig {
	if c.Dimension <= 0 {
		c.Dimension = 256
	}
	if c.MinGram <= 0 {
		c.MinGram = 3
	}
	if c.MaxGram < c.MinGram {
		c.MaxGram = max(c.MinGram, 5)
	}
	if c.GramWeight <= 0 {
		c.GramWeight = 1
	}
	if c.IDFBuckets <= 0 {
		c.IDFBuckets = 1 << 18
	}
	if c.Hashes <= 0 {
		c.Hashes = 2
	}
	c.Languages = siteLanguages(c.Languages)
	return c
}

// siteLanguages is langs as primary subtags, without repeats or empty tags, or nil when every one is English.
func siteLanguages(langs []string) []string {
	var out []string
	english := true
	for _, l := range langs {
		b := textnorm.Base(l)
		if b == "" || slices.Contains(out, b) {
			continue
		}
		out = append(out, b)
		english = english && b == "en"
	}
	if english {
		return nil
	}
	return out
}

// NewLocal returns an unfitted Local embedder: every feature has IDF 1. Prefer FitLocal.
func NewLocal(cfg LocalConfig) *Local {
	return &Local{cfg: cfg.withDefaults()}
}

// FitLocal returns a Local embedder whose IDF weights are learned from texts (typically every chunk and summary
// of the site). Fitting runs on all cores.
func FitLocal(texts []string, cfg LocalConfig) *Local {
	l := &Local{cfg: cfg.withDefaults()}
	nb := l.cfg.IDFBuckets
	workers := workerCount(len(texts))
	type worker struct {
		st   *workerState
		df   []uint32
		last []int32 // per bucket, the last text counted in df
	}
	ws := make([]worker, workers)
	dfs := make([][]uint32, workers)
	for w := range ws {
		ws[w] = worker{st: newWorkerState(l, true, 4096), df: make([]uint32, nb), last: make([]int32, nb)}
		for i := range ws[w].last {
			ws[w].last[i] = -1
		}
		dfs[w] = ws[w].df
	}
	_ = eachText(context.Background(), len(texts), workers, func(w, i int) {
		st, df, last := ws[w].st, ws[w].df, ws[w].last
		st.countWords(texts[i], l.textLanguage(texts[i]))
		for _, id := range st.touched {
			e := st.entries[id]
			for _, f := range st.fitFeats[e.off : e.off+e.n] {
				if last[f] != int32(i) {
					last[f] = int32(i)
					df[f]++
				}
			}
		}
		st.resetCounts()
	})
	l.setIDF(len(texts), dfs)
	return l
}

// setIDF sets the IDF weights from n documents and per-worker document frequencies by bucket.
func (l *Local) setIDF(n int, dfs [][]uint32) {
	l.docs = uint64(n)
	l.idf = make([]float32, l.cfg.IDFBuckets)
	for b := range l.idf {
		var df uint32
		for _, d := range dfs {
			df += d[b]
		}
		l.idf[b] = float32(math.Log((float64(n)+1)/(float64(df)+1)) + 1)
	}
}

// eachText calls work(w, i) once for every i in [0, n) on workers goroutines, worker w taking the next text as
// it finishes one. It stops early when ctx is done (checked every 64 texts) and then returns ctx's error.
func eachText(ctx context.Context, n, workers int, work func(w, i int)) error {
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if i%64 == 0 && ctx.Err() != nil {
					failed.Store(true)
					return
				}
				work(w, i)
			}
		}()
	}
	wg.Wait()
	if failed.Load() {
		return ctx.Err()
	}
	return nil
}

// Dimension returns the vector length.
func (l *Local) Dimension() int { return l.cfg.Dimension }

// Name identifies the model and the settings that change its vectors.
func (l *Local) Name() string {
	c := l.cfg
	name := fmt.Sprintf("local-hash-v1-d%d-g%d%d-w%g-h%d-b%d", c.Dimension, c.MinGram, c.MaxGram, c.GramWeight, c.Hashes, c.IDFBuckets)
	if len(c.Languages) > 0 {
		name += "-l" + strings.Join(c.Languages, ".")
	}
	return name
}

// textLanguage is the analysis text is read with: nil (English) without Languages, else that of the language its
// first textSample bytes tell among them, or of the main language. A text as short as a question is told by
// textnorm.DetectQuestion, as retrieval tells a question's language; a longer one by its stopwords
// (textnorm.DetectPassage), which costs ingest a hundredth of what the detector's trigrams do.
func (l *Local) textLanguage(text string) *textnorm.Language {
	langs := l.cfg.Languages
	if len(langs) == 0 {
		return nil
	}
	detect := textnorm.DetectQuestion
	if len(text) > questionBytes {
		detect = textnorm.DetectPassage
	}
	if len(text) > textSample {
		cut := textSample
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	if lang, ok := detect(text, langs); ok {
		return textnorm.LanguageOf(lang)
	}
	return textnorm.LanguageOf(langs[0])
}

// textSample bounds the part of a text whose words tell its language: a chunk's first paragraph tells it as
// surely as the whole. A text of questionBytes or fewer is read as a question.
const (
	textSample    = 1024
	questionBytes = 200
)

// Config returns the configuration with defaults applied.
func (l *Local) Config() LocalConfig { return l.cfg }

// Embed returns the unit-length vector of each text. Large batches are spread across all cores; ctx is checked
// between texts.
func (l *Local) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	dim := l.cfg.Dimension
	out := make([][]float32, len(texts))
	backing := make([]float32, len(texts)*dim)
	for i := range out {
		out[i] = backing[i*dim : (i+1)*dim : (i+1)*dim]
	}
	// A query is a handful of words; a batch shares a vocabulary of thousands.
	hint := 4096
	if len(texts) == 1 {
		hint = len(texts[0])/6 + 8
	}
	sts := make([]*workerState, workerCount(len(texts)))
	for w := range sts {
		sts[w] = newWorkerState(l, false, hint)
	}
	if err := eachText(ctx, len(texts), len(sts), func(w, i int) { sts[w].embed(texts[i], l.textLanguage(texts[i]), out[i]) }); err != nil {
		return nil, fmt.Errorf("embed: local: %w", err)
	}
	return out, nil
}

// workerCount is 1 for small batches, where starting goroutines costs more than it saves, else GOMAXPROCS.
func workerCount(n int) int {
	if n < 32 {
		return 1
	}
	return min(runtime.GOMAXPROCS(0), (n+31)/32)
}
