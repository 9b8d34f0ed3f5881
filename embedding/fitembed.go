package embedding

import (
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"strings"
	"sync"

	"github.com/ragproxy/ragproxy/firsterr"
	"github.com/ragproxy/ragproxy/textnorm"
)

// FitEmbed is FitLocal(texts, cfg) followed by Embed(ctx, texts), bit for bit, at a fraction of the cost. Each
// distinct word's features are computed once per core, and catalogue sites' repetition is paid for once: a text
// is read as its first line and the rest, texts with the same rest share its word counts (ingest embeds a chunk
// as "page title > headings" over the chunk text, and half of the Berkeley guide's chunk texts repeat on other
// pages), and a repeated text is embedded once but counts once per copy in the IDF. A line break always ends a
// word, so the counts of the two parts add up to those of the whole text. Ingest, which embeds the corpus it fits
// on, should use it.
func FitEmbed(ctx context.Context, texts []string, cfg LocalConfig) (*Local, [][]float32, error) {
	return FitEmbedFunc(ctx, len(texts), func(i int) (string, error) { return texts[i], nil }, cfg)
}

// FitEmbedFunc is FitEmbed over n texts that text returns, for a caller that keeps them on disk: it asks for
// each text twice or three times, from several goroutines at once, and holds none of them (a large site's
// search texts are hundreds of megabytes).
func FitEmbedFunc(ctx context.Context, n int, text func(i int) (string, error), cfg LocalConfig) (*Local, [][]float32, error) {
	dim := cfg.withDefaults().Dimension
	out := make([][]float32, n)
	backing := make([]float32, n*dim)
	for i := range out {
		out[i] = backing[i*dim : (i+1)*dim : (i+1)*dim]
	}
	l, err := FitEmbedInto(ctx, n, text, cfg, func(i int, v []float32) error {
		copy(out[i], v)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return l, out, nil
}

// FitEmbedInto is FitEmbedFunc for a caller that stores the vectors as they come rather than holding them all
// (a large site's are hundreds of megabytes): it calls put once for every text, vector i for text i, in no
// particular order and from several goroutines at once; v is valid only during the call. The first error put
// returns ends the embedding and is returned.
func FitEmbedInto(ctx context.Context, n int, text func(i int) (string, error), cfg LocalConfig, put func(i int, v []float32) error) (*Local, error) {
	l := &Local{cfg: cfg.withDefaults()}
	c := l.cfg
	groups, firstOf, err := groupTexts(n, text, l.textLanguage)
	if err != nil {
		return nil, fmt.Errorf("embed: local fit: %w", err)
	}
	var readErr firsterr.Holder
	read := func(i int) string {
		t, err := text(i)
		readErr.Keep(err)
		return t
	}
	workers := workerCount(len(groups))
	type wordCount struct {
		id    uint32
		count int32
	}
	type job struct {
		st     *workerState
		texts  []int         // the distinct texts this worker took, by the position of their first copy
		counts [][]wordCount // per taken text, its words in first-occurrence order
		body   []wordCount   // the current group's rest, in first-occurrence order
		df     []uint32
		last   []int32 // per bucket, the last text counted in df
	}
	jobs := make([]*job, workers)
	dfs := make([][]uint32, workers)
	for w := range jobs {
		j := &job{st: newWorkerState(l, true, 4096), df: make([]uint32, c.IDFBuckets), last: make([]int32, c.IDFBuckets)}
		j.st.vec = true
		for i := range j.last {
			j.last[i] = -1
		}
		jobs[w], dfs[w] = j, j.df
	}
	err = eachText(ctx, len(groups), workers, func(w, g int) {
		j := jobs[w]
		st, last := j.st, j.last
		grp := &groups[g]
		if grp.restOf >= 0 {
			_, rest := splitFirst(read(grp.restOf))
			st.countWords(rest, grp.lang)
		}
		j.body = j.body[:0]
		for _, id := range st.touched {
			j.body = append(j.body, wordCount{id, st.counts[id]})
		}
		st.resetCounts()
		for _, t := range grp.texts {
			first, _ := splitFirst(read(t.pos))
			st.countWords(first, grp.lang)
			for _, b := range j.body {
				if st.counts[b.id] == 0 {
					st.touched = append(st.touched, b.id)
				}
				st.counts[b.id] += b.count
			}
			wc := make([]wordCount, len(st.touched))
			for k, id := range st.touched {
				wc[k] = wordCount{id, st.counts[id]}
				e := st.entries[id]
				for _, b := range st.fitFeats[e.off : e.off+e.n] {
					if last[b] != int32(t.pos) {
						last[b] = int32(t.pos)
						j.df[b] += t.copies
					}
				}
			}
			st.resetCounts()
			j.texts = append(j.texts, t.pos)
			j.counts = append(j.counts, wc)
		}
	})
	if err == nil {
		err = readErr.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("embed: local fit: %w", err)
	}
	l.setIDF(n, dfs)

	// The copies of a text (firstOf[i] != i) take its vector: head[f] is text f's first copy, next[k] the copy
	// after k, -1 the end.
	head, next := make([]int32, n), make([]int32, n)
	for i := range head {
		head[i], next[i] = -1, -1
	}
	for i := n - 1; i >= 0; i-- {
		if f := firstOf[i]; f != i {
			next[i], head[f] = head[f], int32(i)
		}
	}
	var putErr firsterr.Holder
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := j.st
			// Apply the IDF now that it is known: output feature k belongs to base feature k/Hashes.
			for _, e := range st.entries {
				for k := e.off; k < e.off+e.n; k++ {
					fo := k * uint32(c.Hashes)
					for h := range uint32(c.Hashes) {
						st.feats[fo+h].w *= l.idf[st.fitFeats[k]]
					}
				}
			}
			v := make([]float32, c.Dimension)
			for t, i := range j.texts {
				if putErr.Err() != nil {
					return
				}
				clear(v)
				for _, wc := range j.counts[t] {
					tf := float32(1 + math.Log(float64(wc.count)))
					e := st.entries[wc.id]
					for _, f := range st.feats[e.off*uint32(c.Hashes) : (e.off+e.n)*uint32(c.Hashes)] {
						v[f.out] += tf * f.w
					}
				}
				j.counts[t] = nil // what the vector holds is free to go
				normalize(v)
				err := put(i, v)
				for k := head[i]; err == nil && k >= 0; k = next[k] {
					err = put(int(k), v)
				}
				putErr.Keep(err)
			}
		}()
	}
	wg.Wait()
	if err := putErr.Err(); err != nil {
		return nil, err
	}
	return l, nil
}

// textGroup is the distinct texts that share everything after their first line, and their language.
type textGroup struct {
	restOf int // the position of a text whose rest (from the first line break on) the group shares; -1 for none
	texts  []groupText
	lang   *textnorm.Language
}

// groupText is a distinct text of a group.
type groupText struct {
	pos    int // position of its first copy
	copies uint32
}

// splitFirst splits t into its first line and the rest, from the line break on.
func splitFirst(t string) (first, rest string) {
	if k := strings.IndexByte(t, '\n'); k >= 0 {
		return t[:k], t[k:]
	}
	return t, ""
}

// textKey identifies a string by two 64-bit hashes of different seeds: two of a corpus's strings share a key
// with a probability of about 2^-128 per pair.
type textKey [2]uint64

func newTextKeyer() func(s string) textKey {
	s0, s1 := maphash.MakeSeed(), maphash.MakeSeed()
	return func(s string) textKey { return textKey{maphash.String(s0, s), maphash.String(s1, s)} }
}

// groupTexts groups the distinct texts by their language (lang) and what follows their first line, in order of
// first appearance, and returns for every position the position of its text's first copy. One-line texts are
// groups of their own, and a group holds at most maxGroup texts, so that the work still spreads over the cores.
// It reads each text once and keeps keys of them, not the texts.
func groupTexts(n int, text func(i int) (string, error), lang func(text string) *textnorm.Language) (groups []textGroup, firstOf []int, err error) {
	type where struct{ group, text int }
	type restKey struct {
		rest textKey
		lang *textnorm.Language
	}
	key := newTextKeyer()
	byText := make(map[[2]textKey]where, n) // first line and rest -> where the text is
	byRest := make(map[restKey]int, n)      // language and rest -> the group that takes its next text
	firstOf = make([]int, n)
	for i := range n {
		t, err := text(i)
		if err != nil {
			return nil, nil, err
		}
		first, rest := splitFirst(t)
		fk, rk := key(first), key(rest)
		if at, ok := byText[[2]textKey{fk, rk}]; ok {
			gt := &groups[at.group].texts[at.text]
			gt.copies++
			firstOf[i] = gt.pos
			continue
		}
		tl := lang(t)
		g, ok := byRest[restKey{rk, tl}]
		if !ok || rest == "" || len(groups[g].texts) >= maxGroup {
			g = len(groups)
			restOf := i
			if rest == "" {
				restOf = -1
			}
			groups = append(groups, textGroup{restOf: restOf, lang: tl})
			byRest[restKey{rk, tl}] = g
		}
		byText[[2]textKey{fk, rk}] = where{g, len(groups[g].texts)}
		groups[g].texts = append(groups[g].texts, groupText{pos: i, copies: 1})
		firstOf[i] = i
	}
	return groups, firstOf, nil
}

// maxGroup bounds the texts of a group: a worker takes a whole group, and the rest is counted once per group.
const maxGroup = 64
