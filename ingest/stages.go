package ingest

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/ragproxy/ragproxy/embed"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest/chunk"
	"github.com/ragproxy/ragproxy/ingest/clean"
	"github.com/ragproxy/ragproxy/ingest/crawl"
	"github.com/ragproxy/ragproxy/ingest/leiden"
	"github.com/ragproxy/ragproxy/ingest/links"
	"github.com/ragproxy/ragproxy/ingest/summary"
	"golang.org/x/sync/errgroup"
)

// doc is a cleaned page on its way into the index.
type doc struct {
	url, title, markdown string
	hash, rawHash        string
	links                []string
	reused               *index.Page // the previous index's page when the body is unchanged
}

// fetch crawls or reads the mirror.
func (r *run) fetch(ctx context.Context) ([]crawl.Page, error) {
	bar := r.progress.stage("crawled", -1)
	defer bar.done()
	var mu sync.Mutex
	var pages []crawl.Page
	emit := func(p crawl.Page) {
		mu.Lock()
		pages = append(pages, p)
		mu.Unlock()
		bar.add(1)
	}
	var st crawl.Stats
	var err error
	if isMirror(r.cfg.Source) {
		if r.cfg.BaseURL == "" {
			return nil, fmt.Errorf("ingest %s: a mirror directory needs --base-url", r.cfg.Source)
		}
		st, err = crawl.ReadMirror(ctx, r.cfg.Source, r.cfg.BaseURL, emit)
	} else {
		cc := r.cfg.Crawl
		cc.Start = r.cfg.Source
		st, err = crawl.Crawl(ctx, cc, emit)
	}
	if err != nil {
		return nil, fmt.Errorf("ingest %s: %w", r.cfg.Source, err)
	}
	r.report.Fetched, r.report.Skipped = st.Pages, st.Skipped
	if st.SkippedTotal() > 0 {
		r.cfg.Logger.Info("pages skipped while fetching", "skipped", st.String())
	}
	// Emission order depends on scheduling; sort so everything downstream is deterministic.
	sort.Slice(pages, func(i, j int) bool { return pages[i].URL < pages[j].URL })
	return pages, nil
}

// clean turns raw pages into markdown in parallel, reusing unchanged pages, and drops duplicate content.
func (r *run) clean(ctx context.Context, raw []crawl.Page) ([]*doc, error) {
	cleaner, err := clean.New(r.cfg.Clean)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	bar := r.progress.stage("cleaned", len(raw))
	defer bar.done()
	docs := make([]*doc, len(raw))
	parallel(len(raw), func(i int) {
		defer bar.add(1)
		if ctx.Err() != nil {
			return
		}
		p := raw[i]
		d := &doc{url: p.URL, rawHash: sha(p.Body), links: p.Links}
		if old := r.prev.page(p.URL); old != nil && old.RawHash == d.rawHash {
			d.title, d.markdown, d.hash, d.reused = old.Title, old.Markdown, old.Hash, old
			docs[i] = d
			return
		}
		var c clean.Doc
		var err error
		if p.ContentType == "application/pdf" {
			c, err = clean.PDF(p.Body)
		} else {
			c, err = cleaner.HTML(p.Body, p.URL)
		}
		if err != nil || strings.TrimSpace(c.Markdown) == "" {
			r.cfg.Logger.Debug("page unreadable", "url", p.URL, "err", err)
			return
		}
		d.title, d.markdown, d.hash = c.Title, c.Markdown, sha([]byte(c.Markdown))
		if d.title == "" {
			d.title = p.URL
		}
		docs[i] = d
	})
	// Drop duplicates by markdown hash, keeping the first URL in sort order; links to a dropped copy are
	// redirected to the kept one.
	seen := map[string]*doc{}
	alias := map[string]string{}
	var out []*doc
	for _, d := range docs {
		if d == nil {
			if ctx.Err() == nil {
				r.report.Unreadable++
			}
			continue
		}
		if first, ok := seen[d.hash]; ok {
			alias[d.url] = first.url
			r.report.Duplicates++
			continue
		}
		seen[d.hash] = d
		out = append(out, d)
	}
	for _, d := range out {
		for j, l := range d.links {
			if a, ok := alias[l]; ok {
				d.links[j] = a
			}
		}
	}
	return out, nil
}

// graph applies link cleaning and lays out the index pages with their LINKS_TO edges.
func (r *run) graph(docs []*doc) *index.Index {
	raw := make(map[string][]string, len(docs))
	byURL := make(map[string]*doc, len(docs))
	for _, d := range docs {
		raw[d.url] = d.links
		byURL[d.url] = d
	}
	keep, cleaned, st := links.Clean(raw, r.cfg.Links)
	r.cfg.Logger.Info("links cleaned", "stats", fmt.Sprintf("%+v", st))
	ids := make(map[string]int, len(keep))
	for i, u := range keep {
		ids[u] = i
	}
	ix := &index.Index{Pages: make([]index.Page, len(keep))}
	for i, u := range keep {
		d := byURL[u]
		p := index.Page{ID: i, URL: u, Title: d.title, Markdown: d.markdown, Hash: d.hash, RawHash: d.rawHash,
			Section: r.section(u)}
		for _, l := range cleaned[u] {
			if j, ok := ids[l]; ok {
				p.Links = append(p.Links, j)
			}
		}
		ix.Pages[i] = p
	}
	return ix
}

func (r *run) section(u string) string {
	best := ""
	for _, s := range r.cfg.Links.Sections {
		if strings.HasPrefix(u, s) && len(s) > len(best) {
			best = s
		}
	}
	return best
}

// chunk splits every page, reusing the previous chunks of unchanged pages.
func (r *run) chunk(ctx context.Context, ix *index.Index, docs []*doc) {
	bar := r.progress.stage("chunked", len(ix.Pages))
	defer bar.done()
	per := make([][]chunk.Chunk, len(ix.Pages))
	parallel(len(ix.Pages), func(i int) {
		defer bar.add(1)
		if ctx.Err() != nil {
			return
		}
		p := &ix.Pages[i]
		if old := r.prev.page(p.URL); old != nil && old.Hash == p.Hash {
			per[i] = r.prev.chunks(old)
			return
		}
		per[i] = chunk.Split(r.tok, p.Markdown, r.cfg.Chunk)
	})
	for i := range ix.Pages {
		p := &ix.Pages[i]
		if old := r.prev.page(p.URL); old != nil && old.Hash == p.Hash {
			r.report.Reused++
		}
		for ord, c := range per[i] {
			id := len(ix.Chunks)
			ix.Chunks = append(ix.Chunks, index.Chunk{ID: id, PageID: i, Ord: ord, Text: c.Text, Tokens: c.Tokens})
			p.Chunks = append(p.Chunks, id)
		}
	}
}

// summarise writes one line per page: extractive for all, then LLM summaries where a model is configured
// (reused by content hash; a page whose LLM call fails keeps its extractive line).
func (r *run) summarise(ctx context.Context, ix *index.Index) error {
	bar := r.progress.stage("summarised", len(ix.Pages))
	defer bar.done()
	docs := make([]summary.Doc, len(ix.Pages))
	for i, p := range ix.Pages {
		docs[i] = summary.Doc{Title: p.Title, Markdown: p.Markdown}
	}
	lines := summary.Extractive(docs, r.cfg.Summary)
	for i := range ix.Pages {
		ix.Pages[i].Summary = lines[i]
	}
	if r.cfg.Summarizer == nil {
		bar.add(len(ix.Pages))
		return nil
	}
	model := r.cfg.Summarizer.Model
	limit := r.cfg.SummaryConcurrency
	if limit <= 0 {
		limit = 4
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	var mu sync.Mutex
	failed := 0
	for i := range ix.Pages {
		p := &ix.Pages[i]
		if s, ok := r.prev.llmSummary(p.Hash, model); ok {
			p.Summary = s
			bar.add(1)
			continue
		}
		g.Go(func() error {
			defer bar.add(1)
			s, err := r.cfg.Summarizer.Summarize(gctx, docs[i])
			if err != nil {
				if gctx.Err() != nil {
					return gctx.Err()
				}
				mu.Lock()
				failed++
				mu.Unlock()
				r.cfg.Logger.Warn("LLM summary failed; keeping the extractive one", "url", p.URL, "err", err)
				return nil
			}
			p.Summary = s
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("ingest: summaries: %w", err)
	}
	if failed > 0 {
		r.cfg.Logger.Warn("LLM summaries failed", "pages", failed)
	}
	return nil
}

// communities finds components and Leiden communities over LINKS_TO.
func (r *run) communities(ix *index.Index) error {
	adj := make([][]int, len(ix.Pages))
	for i, p := range ix.Pages {
		adj[i] = p.Links
	}
	a := leiden.Communities(len(ix.Pages), adj, r.cfg.Graph)
	for i := range ix.Pages {
		ix.Pages[i].Component = a.Component[i]
		ix.Pages[i].Community = a.Community[i]
	}
	ix.Manifest.Communities = a.Communities
	ix.Manifest.Modularity = a.Modularity
	ix.Manifest.SmallComponentPages = a.SmallComponentPages
	return nil
}

// embed embeds summaries and chunks, reusing the previous vectors of identical texts under the same embedder.
func (r *run) embed(ctx context.Context, ix *index.Index) error {
	if err := r.chooseEmbedder(ix); err != nil {
		return err
	}
	sums := make([]string, len(ix.Pages))
	for i, p := range ix.Pages {
		sums[i] = p.Title + "\n" + p.Summary
	}
	texts := make([]string, len(ix.Chunks))
	trails := index.ChunkContexts(ix)
	for i, c := range ix.Chunks {
		texts[i] = index.SearchText(ix.Pages[c.PageID].Title, trails[i], c.Text)
	}
	bar := r.progress.stage("embedded", len(sums)+len(texts))
	defer bar.done()
	var err error
	if ix.SummaryVectors, err = r.embedReusing(ctx, sums, r.prev.summaryVectors(r.embedder, r.embState), bar); err != nil {
		return fmt.Errorf("ingest: embed summaries: %w", err)
	}
	if ix.ChunkVectors, err = r.embedReusing(ctx, texts, r.prev.chunkVectors(r.embedder, r.embState), bar); err != nil {
		return fmt.Errorf("ingest: embed chunks: %w", err)
	}
	return nil
}

func (r *run) chooseEmbedder(ix *index.Index) error {
	if r.cfg.Embedder != nil {
		r.embedder = r.cfg.Embedder
		return nil
	}
	fresh := embed.NewLocal(r.cfg.Local)
	if st, ok := r.prev.localState(fresh.Name()); ok {
		l := embed.NewLocal(r.cfg.Local)
		if err := l.UnmarshalBinary(st); err == nil {
			// Keep the previous IDF table: unchanged texts keep their vectors. A full rebuild (--full) refits.
			r.embedder, r.embState = l, st
			return nil
		}
	}
	corpus := make([]string, 0, len(ix.Chunks)+len(ix.Pages))
	for _, c := range ix.Chunks {
		corpus = append(corpus, c.Text)
	}
	for _, p := range ix.Pages {
		corpus = append(corpus, p.Title+"\n"+p.Summary)
	}
	l := embed.FitLocal(corpus, r.cfg.Local)
	st, err := l.MarshalBinary()
	if err != nil {
		return fmt.Errorf("ingest: local embedder: %w", err)
	}
	r.embedder, r.embState = l, st
	return nil
}

// embedReusing embeds texts in batches, taking vectors from old where the same text was embedded before.
func (r *run) embedReusing(ctx context.Context, texts []string, old map[string][]float32, bar *bar) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var todo []int
	for i, t := range texts {
		if v, ok := old[t]; ok {
			out[i] = v
			bar.add(1)
			continue
		}
		todo = append(todo, i)
	}
	const batch = 512
	for lo := 0; lo < len(todo); lo += batch {
		hi := min(lo+batch, len(todo))
		in := make([]string, hi-lo)
		for j, i := range todo[lo:hi] {
			in[j] = texts[i]
		}
		vecs, err := r.embedder.Embed(ctx, in)
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(in) {
			return nil, fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(in))
		}
		for j, i := range todo[lo:hi] {
			out[i] = vecs[j]
		}
		bar.add(len(in))
	}
	r.report.Embedded += len(todo)
	return out, nil
}

// parallel runs f(0..n-1) on all cores.
func parallel(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	var wg sync.WaitGroup
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	wg.Wait()
}
