package ingest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest/chunk"
	"github.com/ragproxy/ragproxy/ingest/clean"
	"github.com/ragproxy/ragproxy/ingest/crawl"
	"github.com/ragproxy/ragproxy/ingest/leiden"
	"github.com/ragproxy/ragproxy/ingest/links"
	"github.com/ragproxy/ragproxy/ingest/summary"
	"github.com/ragproxy/ragproxy/tokenizer"
)

// Edits are an operator's changes on top of the site: pages put into the index and URLs deleted from it. They
// are saved in the index directory (edits.json, beside the versions, so they outlive every version) and every
// Run applies them after reading the site: a re-crawl does not bring a deleted page back, and a put page stays,
// replacing whatever the site serves at its URL, until its edit is forgotten (Forget) or the page is deleted.
//
// Edits is plain data; it is not safe for concurrent changes.
type Edits struct {
	Put     map[string]PutPage `json:"put,omitempty"`
	Deleted map[string]Edit    `json:"deleted,omitempty"`
}

// Edit says who made an edit and when.
type Edit struct {
	At time.Time `json:"at"`
	By string    `json:"by,omitempty"`
}

// PutPage is a page an operator put into the index under URL (canonical, see crawl.Canonical). Its content is
// HTML, cleaned like a crawled page and with its same-host links, or Markdown, taken as the cleaned content
// (markdown links are not followed). Title, when set, replaces the title cleaning finds (for markdown, the
// first heading, else the URL).
type PutPage struct {
	Edit
	URL      string `json:"url"`
	Title    string `json:"title,omitempty"`
	HTML     string `json:"html,omitempty"`
	Markdown string `json:"markdown,omitempty"`
}

const editsFile = "edits.json"

// LoadEdits reads the edits saved in the index directory dir; none saved is no edits.
func LoadEdits(dir string) (*Edits, error) {
	b, err := os.ReadFile(filepath.Join(dir, editsFile))
	if errors.Is(err, os.ErrNotExist) {
		return &Edits{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("load edits: %w", err)
	}
	e := &Edits{}
	if err := json.Unmarshal(b, e); err != nil {
		return nil, fmt.Errorf("load edits: %s: %w", editsFile, err)
	}
	return e, nil
}

// SaveEdits replaces the edits saved in the index directory dir (write and rename, so a reader sees the old
// edits or the new ones).
func SaveEdits(dir string, e *Edits) error {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return fmt.Errorf("save edits: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save edits: %w", err)
	}
	var r [8]byte
	rand.Read(r[:])
	path := filepath.Join(dir, editsFile)
	tmp := path + ".tmp-" + hex.EncodeToString(r[:])
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("save edits: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("save edits: %w", err)
	}
	return nil
}

// Clone returns a copy of e that can be changed without changing e.
func (e *Edits) Clone() *Edits {
	return &Edits{Put: maps.Clone(e.Put), Deleted: maps.Clone(e.Deleted)}
}

// PutPage records p, replacing an earlier edit of its URL.
func (e *Edits) PutPage(p PutPage) {
	delete(e.Deleted, p.URL)
	if e.Put == nil {
		e.Put = map[string]PutPage{}
	}
	e.Put[p.URL] = p
}

// Delete records that url is deleted, replacing an earlier edit of it.
func (e *Edits) Delete(url string, ed Edit) {
	delete(e.Put, url)
	if e.Deleted == nil {
		e.Deleted = map[string]Edit{}
	}
	e.Deleted[url] = ed
}

// Forget drops the edit of url, if any, and reports whether there was one: from the next Run on, the URL is
// what the site says.
func (e *Edits) Forget(url string) bool {
	_, put := e.Put[url]
	_, deleted := e.Deleted[url]
	delete(e.Put, url)
	delete(e.Deleted, url)
	return put || deleted
}

// applyEdits drops the deleted and put URLs from docs (sorted by URL), adds the put pages and returns the docs
// sorted again. A put page that no longer cleans to any content is left out, with a warning.
func (r *run) applyEdits(docs []*doc) ([]*doc, error) {
	e := r.cfg.Edits
	if e == nil || len(e.Put)+len(e.Deleted) == 0 {
		return docs, nil
	}
	cleaner, err := clean.New(r.cfg.Clean)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	out := docs[:0:0]
	for _, d := range docs {
		_, put := e.Put[d.url]
		_, deleted := e.Deleted[d.url]
		if !put && !deleted {
			out = append(out, d)
		}
	}
	r.forced = make(map[string]bool, len(e.Put))
	for _, u := range slices.Sorted(maps.Keys(e.Put)) {
		d, err := putDoc(cleaner, e.Put[u], r.cfg.Logger)
		if err != nil {
			r.cfg.Logger.Warn("put page left out", "url", u, "err", err)
			continue
		}
		r.forced[u] = true
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].url < out[j].url })
	return out, nil
}

// ErrNoContent is returned for a put page that has no readable content.
var ErrNoContent = errors.New("no readable content")

// putDoc turns a put page into a doc; an HTML page keeps the FAQ entries it marks up, as a crawled one does.
func putDoc(cleaner *clean.Cleaner, p PutPage, logger *slog.Logger) (*doc, error) {
	d := &doc{url: p.URL}
	switch {
	case p.HTML != "":
		c, entries, err := cleanHTML(cleaner, []byte(p.HTML), p.URL, p.URL, logger)
		if err != nil {
			return nil, fmt.Errorf("put page %s: %w", p.URL, err)
		}
		d.title, d.markdown, d.rawHash, d.faq = c.Title, c.Markdown, sha([]byte(p.HTML)), entries
		d.lang, d.declared = pageLanguage(c, p.URL, "")
		d.alternates, d.anchors = c.Alternates, c.Anchors
		d.links = crawl.Links([]byte(p.HTML), p.URL)
		d.discovered = d.links
	default:
		d.markdown = strings.TrimSpace(p.Markdown) + "\n"
		d.title = markdownTitle(d.markdown)
	}
	if strings.TrimSpace(d.markdown) == "" {
		return nil, fmt.Errorf("put page %s: %w", p.URL, ErrNoContent)
	}
	if p.Title != "" {
		d.title = p.Title
	}
	if d.title == "" {
		d.title = p.URL
	}
	d.hash = sha([]byte(d.markdown))
	return d, nil
}

// markdownTitle is the text of the first heading of md, or "".
func markdownTitle(md string) string {
	for _, line := range strings.Split(md, "\n") {
		if t, ok := strings.CutPrefix(strings.TrimSpace(line), "#"); ok {
			return strings.TrimSpace(strings.TrimLeft(t, "#"))
		}
	}
	return ""
}

// CheckPut reports whether p would give the index a page, as Apply and Run would clean it under the settings of
// the current version in dir: ErrNoContent when it has none.
func CheckPut(dir string, p PutPage) error {
	m, err := index.LoadManifest(dir)
	if err != nil {
		return fmt.Errorf("check put page: %w", err)
	}
	var cfg Config
	if err := settingsOf(m, &cfg); err != nil {
		return fmt.Errorf("check put page: %w", err)
	}
	cleaner, err := clean.New(cfg.Clean)
	if err != nil {
		return fmt.Errorf("check put page: %w", err)
	}
	_, err = putDoc(cleaner, p, slog.New(slog.DiscardHandler))
	return err
}

// Apply makes a new version of cfg.IndexDir from its current one with edits applied, without reading the site,
// and saves edits in cfg.IndexDir for every later Run. The current version's pages stay as they are (their links
// as link cleaning left them, plus links its crawl saw to a put page), deleted URLs go, put pages are cleaned and
// added, and chunks, summaries, communities and vectors are recomputed where the pipeline needs to, the rest
// reused. It uses the current version's ingest settings and source and summarises as it did; cfg gives the
// embedder (which must be the version's), the summarizer (needed when the version has LLM summaries), the
// versions to keep, progress and logging. cfg.Source and cfg.Edits are ignored.
func Apply(ctx context.Context, cfg Config, edits *Edits) (*Report, error) {
	start := time.Now()
	if cfg.IndexDir == "" {
		return nil, errors.New("ingest: apply edits: index directory is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	prev, err := index.Load(cfg.IndexDir)
	if err != nil {
		return nil, fmt.Errorf("ingest: apply edits: %w", err)
	}
	m := prev.Manifest
	if err := settingsOf(&m, &cfg); err != nil {
		return nil, fmt.Errorf("ingest: apply edits: %w", err)
	}
	cfg.Source, cfg.Edits = m.Source, edits
	if err := matchModels(&m, &cfg, prev.LanguageTags()); err != nil {
		return nil, fmt.Errorf("ingest: apply edits: %w", err)
	}
	r := &Report{}
	run := newRun(cfg, r)
	run.prev = newReuse(prev, run.settings(), tokenizer.EncodingName)
	close(run.prevReady)
	run.precleaned = true
	if prev.Crawl != nil {
		run.crawled = true
		run.refreshes = slices.Clone(prev.Crawl.Refreshes)
	}
	run.copies = run.prev.copyRecords() // edits read no PDFs: the next ingest still finds the copies left out
	if err := run.openSpill(); err != nil {
		return nil, err
	}
	defer run.closeSpill()
	docs, err := run.applyEdits(docsOf(prev, edits))
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("ingest: apply edits: %w (an index needs one page)", ErrNoPages)
	}
	if err := run.build(ctx, docs); err != nil {
		return nil, err
	}
	if err := SaveEdits(cfg.IndexDir, edits); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	r.Duration = time.Since(start)
	cfg.Logger.Info("edits applied", "pages", r.Pages, "chunks", r.Chunks, "reused", r.Reused, "removed", r.Removed,
		"put", len(edits.Put), "deleted", len(edits.Deleted), "version", r.Version, "changed", r.Changed,
		"duration", r.Duration.Round(time.Millisecond))
	return r, nil
}

// docsOf turns the pages of ix into docs as reading the site would have made them, with their links as ix
// holds them (cleaned) and, for a crawled index, a link to each put page the crawl saw on them.
func docsOf(ix *index.Index, edits *Edits) []*doc {
	docs := make([]*doc, len(ix.Pages))
	for i := range ix.Pages {
		p := &ix.Pages[i]
		// A page keeps the language and versions the previous ingest settled for it, as re-ingesting keeps
		// those of an unchanged page.
		d := &doc{url: p.URL, title: p.Title, markdown: p.Markdown, hash: p.Hash, rawHash: p.RawHash, etag: p.ETag,
			lastModified: p.LastModified, source: p.Source, fetched: p.Fetched, faq: p.FAQ,
			lang: p.Lang, declared: true, alternates: versionAlternates(ix, p), anchors: p.Anchors}
		d.links = make([]string, 0, len(p.Links))
		for _, l := range p.Links {
			d.links = append(d.links, ix.Pages[l].URL)
		}
		if c := ix.Crawl; c != nil {
			d.discovered = make([]string, len(c.Links[i]))
			for j, l := range c.Links[i] {
				u := c.URLs[l]
				d.discovered[j] = u
				if _, put := edits.Put[u]; put && u != p.URL && !slices.Contains(d.links, u) {
					d.links = append(d.links, u)
				}
			}
		}
		docs[i] = d
	}
	sort.Slice(docs, func(i, j int) bool { return docs[i].url < docs[j].url })
	return docs
}

// ErrModels is returned by Apply when cfg cannot summarise or embed as the current version did.
var ErrModels = errors.New("the index's models are not available")

// settingsOf sets cfg's stage settings to those recorded in m, so that a version made from it is cleaned,
// chunked and summarised alike and reuses its content.
func settingsOf(m *index.Manifest, cfg *Config) error {
	if len(m.Settings) == 0 {
		return nil
	}
	var s struct {
		Clean   clean.Config
		Links   links.Config
		Chunk   chunk.Config
		Graph   leiden.CommunityConfig
		Summary summary.ExtractiveConfig
	}
	d := json.NewDecoder(bytes.NewReader(m.Settings))
	if err := d.Decode(&s); err != nil {
		return fmt.Errorf("the version's settings: %w", err)
	}
	cfg.Clean, cfg.Links, cfg.Chunk, cfg.Graph, cfg.Summary = s.Clean, s.Links, s.Chunk, s.Graph, s.Summary
	return nil
}

// matchModels makes cfg summarise as m's version did and checks that cfg embeds as it did, so that unchanged
// pages keep their summaries and vectors and the new ones are searched alike; langs are the version's languages,
// which the local embedder reads its texts in.
func matchModels(m *index.Manifest, cfg *Config, langs []string) error {
	switch {
	case m.Summarizer == "extractive":
		cfg.Summarizer = nil
	case cfg.Summarizer == nil:
		return fmt.Errorf("%w: its summaries are written by %s, and no summarizer (upstream key) is configured", ErrModels, m.Summarizer)
	default:
		s := *cfg.Summarizer
		s.Model = m.Summarizer
		cfg.Summarizer = &s
	}
	name := ""
	if cfg.Embedder != nil {
		name = cfg.Embedder.Name()
	} else {
		local := cfg.Local
		local.Languages = langs
		name = embedding.NewLocal(local).Name()
	}
	if name != m.Embedder {
		return fmt.Errorf("%w: it is embedded by %s, not %s", ErrModels, m.Embedder, name)
	}
	return nil
}
