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
