package ingest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/firsterr"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest/boilerplate"
	"github.com/ragproxy/ragproxy/ingest/chunk"
	"github.com/ragproxy/ragproxy/ingest/clean"
	"github.com/ragproxy/ragproxy/ingest/crawl"
	"github.com/ragproxy/ragproxy/ingest/faqmarkup"
	"github.com/ragproxy/ragproxy/ingest/leiden"
	"github.com/ragproxy/ragproxy/ingest/links"
	"github.com/ragproxy/ragproxy/ingest/summary"
	"golang.org/x/net/html"
	"golang.org/x/sync/errgroup"
)

// doc is a cleaned page on its way into the index.
type doc struct {
	url, title, markdown string // markdown until it is spilled (see run.keep), then md
	md                   index.TextRef
	spilled              bool
	hash, rawHash        string
	links                []string    // the page's links, those to dropped duplicates redirected to the copy kept
	discovered           []string    // the page's links as crawled, for the crawl record
	reused               *index.Page // the previous index's page when the body is unchanged
	faq                  []index.FAQEntry
	// The response the page was built from, for the next crawl's conditional requests.
	etag, lastModified, source string
	fetched                    time.Time
	refreshes                  []crawl.Refresh
}

// fetchAndClean crawls or reads the mirror and cleans each page as it arrives, on all cores, so reading and
// cleaning overlap and raw bodies are dropped once hashed and cleaned. Pages whose raw body is unchanged since the
// previous index, or that the server answered 304 Not Modified, keep their previous markdown without being cleaned
// again. Duplicate content is dropped.
func (r *run) fetchAndClean(ctx context.Context) ([]*doc, error) {
	cleaner, err := clean.New(r.cfg.Clean)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	fetched := r.progress.stage("crawled", -1)
	cleaned := r.progress.stage("cleaned", -1)
	defer cleaned.done()

	type result struct {
		url string
		d   *doc // nil: unreadable
	}
	pages := make(chan crawl.Page, 4*runtime.GOMAXPROCS(0))
	var mu sync.Mutex
	var results []result
	// While the previous index is still loading, hashed pages wait in a backlog (up to maxBacklog bytes of
	// bodies) so that reading the site overlaps the load instead of following it.
	var backlog []hashedPage
	backlogBytes := 0
	park := func(h hashedPage) bool {
		mu.Lock()
		defer mu.Unlock()
		if backlogBytes+len(h.page.Body) > maxBacklog {
			return false
		}
		backlog = append(backlog, h)
		backlogBytes += len(h.page.Body)
		return true
	}
	unpark := func() (hashedPage, bool) {
		mu.Lock()
		defer mu.Unlock()
		if len(backlog) == 0 {
			return hashedPage{}, false
		}
		h := backlog[len(backlog)-1]
		backlog = backlog[:len(backlog)-1]
		backlogBytes -= len(h.page.Body)
		return h, true
	}
	clean := func(h hashedPage) {
		d := r.cleanPage(ctx, cleaner, h)
		mu.Lock()
		results = append(results, result{h.page.URL, d})
		mu.Unlock()
		cleaned.add(1)
	}
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range pages {
				h := hashedPage{page: p}
				if !p.NotModified {
					h.rawHash = sha(p.Body)
				}
				select {
				case <-r.prevReady:
				default:
					if park(h) {
						continue
					}
					<-r.prevReady
				}
				for q, ok := unpark(); ok; q, ok = unpark() {
					clean(q)
				}
				clean(h)
			}
			<-r.prevReady
			for q, ok := unpark(); ok; q, ok = unpark() {
				clean(q)
			}
		}()
	}
	emit := func(p crawl.Page) {
		fetched.add(1)
		pages <- p
	}
	var st crawl.Stats
	if isMirror(r.cfg.Source) {
		if r.cfg.BaseURL == "" {
			err = fmt.Errorf("a mirror directory needs --base-url")
		} else {
			st, err = crawl.ReadMirror(ctx, r.cfg.Source, r.cfg.BaseURL, emit)
		}
	} else {
		// The crawl asks conditionally for what the previous index holds, so it waits for that index to load
		// (a fraction of a second, against the minutes of a polite crawl).
		<-r.prevReady
		r.crawled = true
		cc := r.cfg.Crawl
		cc.Start = r.cfg.Source
		cc.Previous = r.prev.revisits()
		st, err = crawl.Crawl(ctx, cc, emit)
	}
	close(pages)
	fetched.done()
	wg.Wait()
	if err != nil {
		return nil, fmt.Errorf("ingest %s: %w", r.cfg.Source, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ingest %s: %w", r.cfg.Source, err)
	}
	r.report.Fetched, r.report.Skipped, r.report.NotModified = st.Pages, st.Skipped, st.NotModified
	r.report.Requests, r.report.FetchedBytes = st.Requests, st.BodyBytes
	if st.SkippedTotal() > 0 {
		r.cfg.Logger.Info("pages skipped while fetching", "skipped", st.String())
	}

	// Arrival order depends on scheduling; sort so everything downstream is deterministic. Drop duplicates by
	// markdown hash, keeping the first URL in sort order; links to a dropped copy are redirected to the kept one.
	sort.Slice(results, func(i, j int) bool { return results[i].url < results[j].url })
	seen := map[string]*doc{}
	alias := map[string]string{}
	var out []*doc
	for _, res := range results {
		d := res.d
		if d == nil {
			r.report.Unreadable++
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
		cloned := false
		for j, l := range d.links {
			if a, ok := alias[l]; ok {
				if !cloned {
					d.links, cloned = slices.Clone(d.links), true // d.discovered keeps the links as crawled
				}
				d.links[j] = a
			}
		}
	}
	return out, nil
}

// maxBacklog bounds the bodies fetchAndClean holds while the previous index loads.
const maxBacklog = 256 << 20

// hashedPage is a fetched page with the SHA-256 of its body.
type hashedPage struct {
	page    crawl.Page
	rawHash string
}

// cleanPage turns one raw page into a doc, or nil when it has no readable content. It needs the previous index
// (r.prevReady closed).
func (r *run) cleanPage(ctx context.Context, cleaner *clean.Cleaner, h hashedPage) *doc {
	if ctx.Err() != nil {
		return nil
	}
	p := h.page
	d := &doc{url: p.URL, rawHash: h.rawHash, links: p.Links, discovered: p.Links, etag: p.ETag,
		lastModified: p.LastModified, source: p.Source, fetched: p.Fetched, refreshes: p.Refreshes}
	old := r.prev.page(p.URL)
	if p.NotModified {
		// The crawler asks conditionally only for pages of the previous index (reuse.revisits), so a 304 takes
		// the path of an unchanged body.
		if old == nil {
			r.cfg.Logger.Warn("page not modified but not in the previous index", "url", p.URL)
			return nil
		}
		d.rawHash = old.RawHash
	}
	if old != nil && old.RawHash == d.rawHash {
		if ref, ok := r.prev.markdownRef(old); ok {
			// The markdown stays where the previous version has it, read from there if at all.
			d.title, d.md, d.spilled, d.hash, d.reused, d.faq = old.Title, ref, true, old.Hash, old, old.FAQ
			return d
		}
		md, err := r.prev.markdown(old)
		if err == nil {
			d.title, d.markdown, d.hash, d.reused, d.faq = old.Title, md, old.Hash, old, old.FAQ
			return r.kept(d)
		}
		r.cfg.Logger.Warn("previous markdown unreadable; cleaning the page again", "url", p.URL, "err", err)
		if p.NotModified {
			return nil // no body to clean: the page is fetched in full by the next crawl
		}
	}
	base := p.URL
	if p.Source != "" {
		base = p.Source // relative links in the body resolve against the URL that served it
	}
	var c clean.Doc
	var err error
	if p.ContentType == "application/pdf" {
		c, err = clean.PDF(p.Body)
	} else {
		c, d.faq, err = cleanHTML(cleaner, p.Body, base, p.URL, r.cfg.Logger)
	}
	if err != nil || strings.TrimSpace(c.Markdown) == "" {
		r.cfg.Logger.Debug("page unreadable", "url", p.URL, "err", err)
		return nil
	}
	d.title, d.markdown, d.hash = c.Title, c.Markdown, sha([]byte(c.Markdown))
	if d.title == "" {
		d.title = p.URL
	}
	return r.kept(d)
}

// kept is d with its markdown spilled, as soon as it is cleaned; should the spill fail, d keeps it in memory
// and build tries again, failing the run.
func (r *run) kept(d *doc) *doc {
	if err := r.keep(d); err != nil {
		r.cfg.Logger.Warn("spilling a page's text failed", "url", d.url, "err", err)
	}
	return d
}

// cleanHTML cleans an HTML page (relative links resolved against base) and extracts its FAQ markup (under the
// page's URL), from one parse: the FAQ extraction reads the tree first, as cleaning changes it.
func cleanHTML(cleaner *clean.Cleaner, body []byte, base, url string, logger *slog.Logger) (clean.Doc, []index.FAQEntry, error) {
	root, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return clean.Doc{}, nil, fmt.Errorf("clean html %s: %w", base, err)
	}
	entries := pageFAQ(root, body, url, logger)
	c, err := cleaner.HTMLTree(root, body, base)
	return c, entries, err
}

// pageFAQ is the FAQ markup of a page's HTML (root, parsed from body), under the page's URL. A page the extractor
// cannot read has none.
func pageFAQ(root *html.Node, body []byte, url string, logger *slog.Logger) []index.FAQEntry {
	entries, err := faqmarkup.ExtractTree(root, body, url)
	if err != nil {
		logger.Debug("faq markup unreadable", "url", url, "err", err)
		return nil
	}
	out := make([]index.FAQEntry, len(entries))
	for i, e := range entries {
		out[i] = index.FAQEntry{Question: e.Question, Answer: e.Answer, URL: e.URL, Alternatives: e.Alternatives, Source: e.Source}
	}
	return out
}

// graph applies link cleaning and lays out the index pages with their LINKS_TO edges.
func (r *run) graph(docs []*doc) *index.Index {
	raw := make(map[string][]string, len(docs))
	byURL := make(map[string]*doc, len(docs))
	for _, d := range docs {
		raw[d.url] = d.links
		byURL[d.url] = d
	}
	var keep []string
	var cleaned map[string][]string
	if r.precleaned {
		keep, cleaned = keepLinks(raw, nil, nil, nil)
	} else {
		var st links.Stats
		keep, cleaned, st = links.Clean(raw, r.cfg.Links)
		r.cfg.Logger.Info("links cleaned", "stats", fmt.Sprintf("%+v", st))
		keep, cleaned = keepLinks(raw, r.forced, keep, cleaned)
	}
	ids := make(map[string]int, len(keep))
	for i, u := range keep {
		ids[u] = i
	}
	ix := &index.Index{Pages: make([]index.Page, len(keep))}
	r.pageRefs = r.pageRefs[:0]
	var rec *crawlRecorder
	if r.crawled {
		rec = newCrawlRecorder(len(keep))
	}
	for i, u := range keep {
		d := byURL[u]
		r.pageRefs = append(r.pageRefs, d.md)
		p := index.Page{ID: i, URL: u, Title: d.title, Hash: d.hash, RawHash: d.rawHash,
			Section: r.section(u), ETag: d.etag, LastModified: d.lastModified, Fetched: d.fetched, Source: d.source,
			FAQ: d.faq}
		rec.add(d)
		for _, l := range cleaned[u] {
			if j, ok := ids[l]; ok {
				p.Links = append(p.Links, j)
			}
		}
		ix.Pages[i] = p
	}
	ix.Crawl = rec.record()
	if ix.Crawl != nil && r.refreshes != nil {
		ix.Crawl.Refreshes = r.refreshes
	}
	return ix
}

// keepLinks adds to the pages link cleaning kept (keep, with their links in cleaned) the pages of raw that force
// names and it dropped, with their links to kept pages, and returns keep sorted. Without keep (links already
// cleaned) it keeps every page of raw.
func keepLinks(raw map[string][]string, force map[string]bool, keep []string, cleaned map[string][]string) ([]string, map[string][]string) {
	if keep == nil {
		cleaned = make(map[string][]string, len(raw))
		force = make(map[string]bool, len(raw))
		for u := range raw {
			force[u] = true
		}
	}
	kept := make(map[string]bool, len(keep)+len(force))
	for _, u := range keep {
		kept[u] = true
	}
	var added []string
	for u := range force {
		if _, ok := raw[u]; ok && !kept[u] {
			kept[u] = true
			added = append(added, u)
		}
	}
	if len(added) == 0 {
		return keep, cleaned
	}
	for _, u := range added {
		seen := map[string]bool{u: true}
		out := []string{}
		for _, l := range raw[u] {
			if kept[l] && !seen[l] {
				seen[l] = true
				out = append(out, l)
			}
		}
		sort.Strings(out)
		cleaned[u] = out
	}
	keep = append(keep, added...)
	sort.Strings(keep)
	return keep, cleaned
}

// crawlRecorder builds the index's crawl record from the kept pages, in page order. A nil *crawlRecorder (an
// index read from a mirror) records nothing.
type crawlRecorder struct {
	rec       index.CrawlRecord
	pos       map[string]int32
	refreshed map[string]bool
}

func newCrawlRecorder(pages int) *crawlRecorder {
	return &crawlRecorder{rec: index.CrawlRecord{URLs: []string{}, Links: make([][]int32, 0, pages)},
		pos: map[string]int32{}, refreshed: map[string]bool{}}
}

func (cr *crawlRecorder) add(d *doc) {
	if cr == nil {
		return
	}
	links := make([]int32, len(d.discovered))
	for j, l := range d.discovered {
		n, ok := cr.pos[l]
		if !ok {
			n = int32(len(cr.rec.URLs))
			cr.pos[l] = n
			cr.rec.URLs = append(cr.rec.URLs, l)
		}
		links[j] = n
	}
	cr.rec.Links = append(cr.rec.Links, links)
	for _, f := range d.refreshes {
		if !cr.refreshed[f.URL] {
			cr.refreshed[f.URL] = true
			cr.rec.Refreshes = append(cr.rec.Refreshes, index.Refresh{URL: f.URL, Target: f.Target, ETag: f.ETag,
				LastModified: f.LastModified, Fetched: f.Fetched})
		}
	}
}

func (cr *crawlRecorder) record() *index.CrawlRecord {
	if cr == nil {
		return nil
	}
	return &cr.rec
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
func (r *run) chunk(ctx context.Context, ix *index.Index, docs []*doc) error {
	bar := r.progress.stage("chunked", len(ix.Pages))
	defer bar.done()
	per := make([][]chunk.Chunk, len(ix.Pages))
	refs := make([][]index.TextRef, len(ix.Pages)) // the chunks' texts in the spill
	olds := make([]*index.Page, len(ix.Pages))
	var failed firsterr.Holder
	fail := failed.Keep
	// The site's template blocks (boilerplate) are left out of every page's chunks; an unchanged page keeps its
	// previous chunks only if the previous version left out the same blocks.
	template, err := r.template(ix)
	if err != nil {
		return err
	}
	sameTemplate := r.prev != nil && r.prev.ix.Manifest.Boilerplate == template.Key()
	// Read the chunks of unchanged pages (from disk: side by side), then split the others, with the tokenizer
	// loaded only if there are any.
	parallel(len(ix.Pages), func(i int) {
		p := &ix.Pages[i]
		if old := r.prev.page(p.URL); old != nil && old.Hash == p.Hash && sameTemplate {
			if cs, rs, ok := r.prev.chunkRefs(old); ok { // the texts stay where the previous version has them
				per[i], refs[i], olds[i] = cs, rs, old
				return
			}
			cs, err := r.prev.chunks(old)
			if err == nil {
				if refs[i], err = r.spillChunks(cs); err != nil {
					fail(err)
					return
				}
				per[i], olds[i] = cs, old
				return
			}
			r.cfg.Logger.Warn("previous chunks unreadable; splitting the page again", "url", p.URL, "err", err)
		}
	})
	if slices.Contains(olds, nil) {
		tok, err := r.tokLoad.get()
		if err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
		r.tok = tok
	}
	if err := failed.Err(); err != nil {
		return fmt.Errorf("ingest: chunk: %w", err)
	}
	parallel(len(ix.Pages), func(i int) {
		defer bar.add(1)
		if ctx.Err() != nil || olds[i] != nil {
			return
		}
		md, err := r.spill.Read(r.pageRefs[i])
		if err != nil {
			fail(err)
			return
		}
		per[i] = chunk.Split(r.tok, template.Strip(md), r.cfg.Chunk)
		if refs[i], err = r.spillChunks(per[i]); err != nil {
			fail(err)
		}
	})
	if err := failed.Err(); err != nil {
		return fmt.Errorf("ingest: chunk: %w", err)
	}
	r.fromChunk, r.chunkRefs = r.fromChunk[:0], r.chunkRefs[:0]
	for i := range ix.Pages {
		p := &ix.Pages[i]
		old := olds[i]
		if old != nil {
			r.report.Reused++
		}
		for ord, c := range per[i] {
			id := len(ix.Chunks)
			ix.Chunks = append(ix.Chunks, index.Chunk{ID: id, PageID: i, Ord: ord, Tokens: c.Tokens})
			r.chunkRefs = append(r.chunkRefs, refs[i][ord])
			p.Chunks = append(p.Chunks, id)
			// A chunk of an unchanged page under the same title has the same search text as before.
			from := -1
			if old != nil && old.Title == p.Title {
				from = old.Chunks[ord]
			}
			r.fromChunk = append(r.fromChunk, from)
		}
	}
	return nil
}

// template finds the site's boilerplate among the pages' markdown (package boilerplate), reading the pages side
// by side and keeping only their edge blocks' identities, and records its key for the manifest.
func (r *run) template(ix *index.Index) (*boilerplate.Set, error) {
	edges := make([][]uint64, len(ix.Pages))
	var failed firsterr.Holder
	parallel(len(ix.Pages), func(i int) {
		md, err := r.spill.Read(r.pageRefs[i])
		if err != nil {
			failed.Keep(err)
			return
		}
		edges[i] = boilerplate.Edges(md, r.cfg.Boilerplate)
	})
	if err := failed.Err(); err != nil {
		return nil, fmt.Errorf("ingest: template: %w", err)
	}
	set := boilerplate.Build(edges, r.cfg.Boilerplate)
	if set.Len() > 0 {
		r.cfg.Logger.Info("site template left out of the chunks", "blocks", set.Len())
	}
	r.boilerplate = set.Key()
	return set, nil
}

// spillChunks moves the chunks' texts to the spill as they are made (they are parts of their page's markdown,
// which they would otherwise keep in memory) and returns where they are.
func (r *run) spillChunks(cs []chunk.Chunk) ([]index.TextRef, error) {
	refs := make([]index.TextRef, len(cs))
	for k := range cs {
		ref, err := r.spill.Add(cs[k].Text)
		if err != nil {
			return nil, err
		}
		refs[k], cs[k].Text = ref, ""
	}
	return refs, nil
}

// summarise writes one line per page: extractive for all, then LLM summaries where a model is configured
// (reused by content hash; a page whose LLM call fails keeps its extractive line).
func (r *run) summarise(ctx context.Context, ix *index.Index) error {
	bar := r.progress.stage("summarised", len(ix.Pages))
	defer bar.done()
	// The pages' markdown is read from disk when asked for; the first read error stops the stage.
	var unread firsterr.Holder
	doc := func(i int) summary.Doc {
		md, err := ix.PageMarkdown(i)
		unread.Keep(err)
		return summary.Doc{Title: ix.Pages[i].Title, Markdown: md}
	}
	failedRead := func() error {
		if err := unread.Err(); err != nil {
			return fmt.Errorf("ingest: summaries: %w", err)
		}
		return nil
	}
	if r.cfg.Summarizer == nil {
		if lines, ok := r.prev.extractiveSummaries(ix, r.settings()); ok {
			// Extractive key terms depend on the whole corpus, so they are reused only when no page changed.
			for i := range ix.Pages {
				ix.Pages[i].Summary = lines[i]
			}
		} else {
			r.extractive(ix, doc)
		}
		bar.add(len(ix.Pages))
		return failedRead()
	}
	model := r.cfg.Summarizer.Model
	if model == "" {
		model = summary.DefaultModel
	}
	var todo []int
	for i := range ix.Pages {
		p := &ix.Pages[i]
		if s, ok := r.prev.llmSummary(p.Hash, model); ok {
			p.Summary, p.SummaryModel = s, model
			bar.add(1)
			continue
		}
		todo = append(todo, i)
	}
	if len(todo) == 0 {
		return nil
	}
	// Every page gets an extractive line first: it stays where the LLM call fails.
	lines := summary.ExtractiveFunc(len(ix.Pages), doc, r.cfg.Summary)
	for _, i := range todo {
		ix.Pages[i].Summary = lines[i]
	}
	if err := failedRead(); err != nil {
		return err
	}
	limit := r.cfg.SummaryConcurrency
	if limit <= 0 {
		limit = 4
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(limit)
	var mu sync.Mutex
	failed := 0
	for _, i := range todo {
		p := &ix.Pages[i]
		g.Go(func() error {
			defer bar.add(1)
			d := doc(i)
			if err := failedRead(); err != nil {
				return err
			}
			s, err := r.cfg.Summarizer.Summarize(gctx, d)
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
			p.Summary, p.SummaryModel = s, model
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

func (r *run) extractive(ix *index.Index, doc func(i int) summary.Doc) {
	lines := summary.ExtractiveFunc(len(ix.Pages), doc, r.cfg.Summary)
	for i := range ix.Pages {
		ix.Pages[i].Summary = lines[i]
	}
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

// embed embeds summaries and chunks, reusing the previous vectors of identical texts under the same embedder. A
// first build with the local embedder fits its IDF table and embeds in one pass over the texts it embeds.
func (r *run) embed(ctx context.Context, ix *index.Index) error {
	sums := make([]string, len(ix.Pages))
	for i, p := range ix.Pages {
		sums[i] = p.Title + "\n" + p.Summary
	}
	bar := r.progress.stage("embedded", len(ix.Pages)+len(ix.Chunks))
	defer bar.done()
	fit, err := r.chooseEmbedder()
	if err != nil {
		return err
	}
	if fit {
		// The chunks' search texts are composed when the fit asks for them, from the texts on disk: all at
		// once they would be the largest thing ingest holds.
		trails, err := index.ChunkTrails(ix)
		if err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
		text := func(i int) (string, error) {
			if i < len(sums) {
				return sums[i], nil
			}
			c := i - len(sums)
			t, err := ix.ChunkText(c)
			return index.SearchText(ix.Pages[ix.Chunks[c].PageID].Title, trails[c], t), err
		}
		// The chunk vectors go to a file as they are computed and the index reads them from there, mapped: a
		// large site's are a third of what ingest would otherwise hold at its peak.
		all := len(sums) + len(ix.Chunks)
		dim := embedding.NewLocal(r.cfg.Local).Dimension()
		vf, err := index.NewVectorFile(filepath.Join(r.spillDir, "chunks.f32"), len(ix.Chunks), dim)
		if err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
		defer vf.Close()
		ix.SummaryVectors = make([][]float32, len(sums))
		backing := make([]float32, len(sums)*dim)
		l, err := embedding.FitEmbedInto(ctx, all, text, r.cfg.Local, func(i int, v []float32) error {
			if i < len(sums) {
				ix.SummaryVectors[i] = backing[i*dim : (i+1)*dim]
				copy(ix.SummaryVectors[i], v)
				return nil
			}
			return vf.Put(i-len(sums), v)
		})
		if err == nil {
			err = vf.SealChunks(ix)
		}
		if err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
		if r.embState, err = l.MarshalBinary(); err != nil {
			return fmt.Errorf("ingest: local embedder: %w", err)
		}
		r.embedder = l
		r.report.Embedded += all
		bar.add(all)
		return nil
	}
	same := r.prev.sameEmbedder(r.embedder, r.embState)
	var oldSums map[string][]float32
	if same {
		oldSums = r.prev.summaryVectors()
	}
	ix.SummaryVectors = make([][]float32, len(sums))
	err = r.embedReusing(ctx, len(sums), func(i int) (string, error) { return sums[i], nil }, oldSums, bar,
		func(i int, v []float32) error {
			ix.SummaryVectors[i] = v
			return nil
		})
	if err != nil {
		return fmt.Errorf("ingest: embed summaries: %w", err)
	}

	// The chunk vectors go to a vector file as they come, as with the local embedder: an upstream model's are
	// larger still (1536 values a chunk). Chunks of unchanged pages take their previous vectors by position;
	// the others are looked up by search text among the previous index's other chunks, then embedded.
	var todo []int
	for i := range ix.Chunks {
		if !same || r.fromChunk[i] < 0 {
			todo = append(todo, i)
		}
	}
	bar.add(len(ix.Chunks) - len(todo))
	if len(todo) == 0 {
		// Every chunk as before (an unchanged site, say): the rows of the previous version's mapped file, which
		// a write would copy and an unchanged version never touches.
		ix.ChunkVectors = make([][]float32, len(ix.Chunks))
		for i := range ix.Chunks {
			ix.ChunkVectors[i] = r.prev.ix.ChunkVectors[r.fromChunk[i]]
		}
		return nil
	}
	dim := len(ix.SummaryVectors[0]) // ErrNoPages: an index has a page
	vf, err := index.NewVectorFile(filepath.Join(r.spillDir, "chunks.f32"), len(ix.Chunks), dim)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	defer vf.Close()
	var oldChunks map[string][]float32
	if same {
		oldChunks = r.prev.chunkVectors(r.fromChunk)
		for i := range ix.Chunks {
			if r.fromChunk[i] >= 0 {
				if err := vf.Put(i, r.prev.ix.ChunkVectors[r.fromChunk[i]]); err != nil {
					return fmt.Errorf("ingest: %w", err)
				}
			}
		}
	}
	text := index.ChunkSearchText(ix)
	err = r.embedReusing(ctx, len(todo), func(j int) (string, error) { return text(todo[j]) }, oldChunks, bar,
		func(j int, v []float32) error { return vf.Put(todo[j], v) })
	if err != nil {
		return fmt.Errorf("ingest: embed chunks: %w", err)
	}
	if err := vf.SealChunks(ix); err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	return nil
}

// searchTexts returns the search text of each chunk of the pages in need (all pages when need is nil); other
// entries are empty.
func searchTexts(ix *index.Index, need []bool) ([]string, error) {
	out := make([]string, len(ix.Chunks))
	var failed firsterr.Holder
	parallel(len(ix.Pages), func(i int) {
		if need != nil && !need[i] {
			return
		}
		texts, err := index.PageSearchTexts(ix, i)
		if err != nil {
			failed.Keep(err)
			return
		}
		for k, c := range ix.Pages[i].Chunks {
			out[c] = texts[k]
		}
	})
	return out, failed.Err()
}

// chooseEmbedder sets r.embedder: the configured one, or the local embedder with the previous index's IDF table
// (so unchanged texts keep their vectors; --full refits). It reports fit when a local embedder must be fitted
// on this corpus first, which embed does in the same pass as embedding.
func (r *run) chooseEmbedder() (fit bool, err error) {
	if r.cfg.Embedder != nil {
		r.embedder = r.cfg.Embedder
		return false, nil
	}
	fresh := embedding.NewLocal(r.cfg.Local)
	if st, ok := r.prev.localState(fresh.Name()); ok {
		if err := fresh.UnmarshalBinary(st); err == nil {
			r.embedder, r.embState = fresh, st
			return false, nil
		}
	}
	return true, nil
}

// embedReusing embeds the n texts that text returns, in batches, taking vectors from old where the same text was
// embedded before, and hands vector i to put: the reused ones as they are found, then the others batch by batch.
// It reads each text it embeds twice (to look it up, then in its batch), so that it holds only a batch of them.
func (r *run) embedReusing(ctx context.Context, n int, text func(i int) (string, error), old map[string][]float32,
	bar *bar, put func(i int, v []float32) error) error {
	var todo []int
	for i := range n {
		t, err := text(i)
		if err != nil {
			return err
		}
		if v, ok := old[t]; ok {
			if err := put(i, v); err != nil {
				return err
			}
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
			var err error
			if in[j], err = text(i); err != nil {
				return err
			}
		}
		vecs, err := r.embedder.Embed(ctx, in)
		if err != nil {
			return err
		}
		if len(vecs) != len(in) {
			return fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(in))
		}
		for j, i := range todo[lo:hi] {
			if err := put(i, vecs[j]); err != nil {
				return err
			}
		}
		bar.add(len(in))
	}
	r.report.Embedded += len(todo)
	return nil
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
