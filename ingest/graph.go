package ingest

import (
	"fmt"
	"sort"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest/links"
)

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
			Section: r.cfg.Links.Section(u), ETag: d.etag, LastModified: d.lastModified, Fetched: d.fetched, Source: d.source,
			FAQ: d.faq, Lang: d.lang, Anchors: d.anchors}
		rec.add(d)
		for _, l := range cleaned[u] {
			if j, ok := ids[l]; ok {
				p.Links = append(p.Links, j)
			}
		}
		ix.Pages[i] = p
	}
	declared := func(i int) bool { d := byURL[ix.Pages[i].URL]; return d != nil && d.declared }
	named := languagesFromURLs(ix, declared)
	fillLanguages(ix, func(i int) bool { return declared(i) || named[i] })
	joinVersions(ix, byURL)
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
