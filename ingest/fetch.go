package ingest

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sort"
	"sync"

	"github.com/ragproxy/ragproxy/ingest/clean"
	"github.com/ragproxy/ragproxy/ingest/crawl"
)

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

	pages := make(chan crawl.Page, 4*runtime.GOMAXPROCS(0))
	var mu sync.Mutex
	var results []cleanedPage
	clean := func(h hashedPage) {
		d := r.cleanPage(ctx, cleaner, h)
		mu.Lock()
		results = append(results, cleanedPage{h.page.URL, d})
		mu.Unlock()
		cleaned.add(1)
	}
	var parked backlog
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.cleanArrivals(pages, &parked, clean)
		}()
	}
	st, err := r.fetch(ctx, func(p crawl.Page) {
		fetched.add(1)
		pages <- p
	})
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
	return r.dropCopies(r.dropDuplicates(results))
}

// fetch crawls the site or reads the mirror, handing each page to emit as it arrives.
func (r *run) fetch(ctx context.Context, emit func(crawl.Page)) (crawl.Stats, error) {
	if isMirror(r.cfg.Source) {
		if r.cfg.BaseURL == "" {
			return crawl.Stats{}, fmt.Errorf("a mirror directory needs --base-url")
		}
		return crawl.ReadMirror(ctx, r.cfg.Source, r.cfg.BaseURL, emit)
	}
	// The crawl asks conditionally for what the previous index holds, so it waits for that index to load
	// (a fraction of a second, against the minutes of a polite crawl).
	<-r.prevReady
	r.crawled = true
	cc := r.cfg.Crawl
	cc.Start = r.cfg.Source
	cc.Previous = r.prev.revisits()
	return crawl.Crawl(ctx, cc, emit)
}

// cleanArrivals hashes the pages that arrive on pages and hands them to clean, until pages is closed. Cleaning
// needs the previous index: while it is still loading, hashed pages wait in parked, and a page that finds parked
// full waits for the load.
func (r *run) cleanArrivals(pages <-chan crawl.Page, parked *backlog, clean func(hashedPage)) {
	for p := range pages {
		h := hashedPage{page: p}
		if !p.NotModified {
			h.rawHash = sha(p.Body)
		}
		select {
		case <-r.prevReady:
		default:
			if parked.park(h) {
				continue
			}
			<-r.prevReady
		}
		parked.drain(clean)
		clean(h)
	}
	<-r.prevReady
	parked.drain(clean)
}

// cleanedPage is what cleaning made of the page at url: nil when it was unreadable.
type cleanedPage struct {
	url string
	d   *doc
}

// dropDuplicates sorts the cleaned pages by URL, as their arrival order depends on scheduling and everything
// downstream must be deterministic, and returns their docs without the unreadable pages and the duplicates: of
// pages with the same markdown hash the first URL in sort order stays, and links to a dropped copy are redirected
// to it.
func (r *run) dropDuplicates(results []cleanedPage) []*doc {
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
	return out
}

// backlog holds hashed pages while the previous index is still loading (up to maxBacklog bytes of bodies), so
// that reading the site overlaps the load instead of following it. It is safe for concurrent use.
type backlog struct {
	mu    sync.Mutex
	pages []hashedPage
	bytes int
}

// park adds h unless that would pass maxBacklog, and reports whether it did.
func (b *backlog) park(h hashedPage) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.bytes+len(h.page.Body) > maxBacklog {
		return false
	}
	b.pages = append(b.pages, h)
	b.bytes += len(h.page.Body)
	return true
}

// unpark takes the page parked last, if any.
func (b *backlog) unpark() (hashedPage, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pages) == 0 {
		return hashedPage{}, false
	}
	h := b.pages[len(b.pages)-1]
	b.pages = b.pages[:len(b.pages)-1]
	b.bytes -= len(h.page.Body)
	return h, true
}

// drain hands the parked pages to f until none is left.
func (b *backlog) drain(f func(hashedPage)) {
	for h, ok := b.unpark(); ok; h, ok = b.unpark() {
		f(h)
	}
}

// maxBacklog bounds the bodies fetchAndClean holds while the previous index loads.
const maxBacklog = 256 << 20

// hashedPage is a fetched page with the SHA-256 of its body.
type hashedPage struct {
	page    crawl.Page
	rawHash string
}
