// Package ingest builds the index that retrieval reads: it crawls a site or reads a mirror, cleans the pages,
// cleans the link graph, chunks, summarises, finds communities, embeds, and writes a new index version. The stage
// packages (crawl, clean, links, chunk, summary, leiden) do the work; this package runs them in order, reuses what
// an earlier index already computed for unchanged pages, and reports progress. An operator's edits (pages put
// and deleted, see Edits) are saved in the index directory; Apply makes a new version with them without reading
// the site, and every Run applies them after reading it.
//
// Run and Apply are safe to call concurrently for different index directories; for one directory, callers
// serialise them.
package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest/boilerplate"
	"github.com/ragproxy/ragproxy/ingest/chunk"
	"github.com/ragproxy/ragproxy/ingest/clean"
	"github.com/ragproxy/ragproxy/ingest/crawl"
	"github.com/ragproxy/ragproxy/ingest/leiden"
	"github.com/ragproxy/ragproxy/ingest/links"
	"github.com/ragproxy/ragproxy/ingest/summary"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/textnorm"
	"github.com/ragproxy/ragproxy/tokenizer"
)

// Config says what to ingest and how. Source and IndexDir are required; every other zero value selects the
// default of the stage it configures.
type Config struct {
	// Source is a start URL (crawl) or a local directory of saved pages (mirror).
	Source string
	// BaseURL maps mirror files to URLs: DIR/a/b/index.html is BASE/a/b/. Required for a mirror.
	BaseURL string
	// IndexDir is where the index is written; an index already there is reused for unchanged pages.
	IndexDir string
	// Full ignores the previous index and recomputes everything.
	Full bool

	Crawl   crawl.Config // Start is set from Source
	Clean   clean.Config
	Links   links.Config
	Chunk   chunk.Config
	Graph   leiden.CommunityConfig
	Summary summary.ExtractiveConfig
	// Boilerplate sets which blocks at the pages' edges are the site's template, left out of the chunks.
	Boilerplate boilerplate.Config

	// Summarizer writes LLM summaries; nil means extractive summaries.
	Summarizer *summary.LLM
	// SummaryConcurrency bounds concurrent LLM summary calls; default 4.
	SummaryConcurrency int
	// Embedder embeds summaries and chunks; nil means the local embedder fitted on the corpus.
	Embedder embedding.Embedder
	// Local configures the local embedder when Embedder is nil.
	Local embedding.LocalConfig
	// Prices add to and override DefaultPrices, by model, for the report's cost estimate.
	Prices map[string]Price

	// Edits are the operator's edits applied on top of what is read (see Edits); nil means those saved in
	// IndexDir.
	Edits *Edits
	// KeepVersions is how many index versions stay on disk (index.WriteOptions.Keep); 0 means
	// index.DefaultKeepVersions.
	KeepVersions int
	// ProtectVersions are versions the write never removes (index.WriteOptions.Protect).
	ProtectVersions []string

	// Progress receives progress bars (a terminal) or periodic log lines; nil means silent.
	Progress io.Writer
	// OnProgress, when set, receives every progress update of every stage, from the pipeline's goroutines; it
	// must be quick and safe for concurrent use.
	OnProgress func(Progress)
	// Logger receives the stage summaries; nil means slog.Default().
	Logger *slog.Logger
	// Version is the ragproxy version recorded in the manifest.
	Version string
}

// Report says what a run did.
type Report struct {
	Fetched int `json:"fetched"`
	// NotModified counts the fetched pages the server answered 304 Not Modified.
	NotModified int `json:"not_modified"`
	// Requests and FetchedBytes are the crawl's HTTP requests and the body bytes they read; zero for a mirror.
	Requests     int                      `json:"requests,omitempty"`
	FetchedBytes int64                    `json:"fetched_bytes,omitempty"`
	Skipped      map[crawl.SkipReason]int `json:"skipped,omitempty"`
	Unreadable   int                      `json:"unreadable"`
	Duplicates   int                      `json:"duplicates"`
	Pages        int                      `json:"pages"`
	Reused       int                      `json:"reused"`
	Removed      int                      `json:"removed"`
	Chunks       int                      `json:"chunks"`
	Links        int                      `json:"links"`
	Embedded     int                      `json:"embedded"`
	// KeptVectors counts the vectors taken from the ledger (paid for by an earlier run) instead of embedded.
	KeptVectors int `json:"kept_vectors,omitempty"`
	// Summaries says where the model summaries came from, when a model was asked for them.
	Summaries SummaryCounts `json:"summaries"`
	// Usage is the tokens billed this run per stage, with the estimated cost.
	Usage    []index.Usage `json:"usage,omitempty"`
	Version  string        `json:"version"`
	Changed  bool          `json:"changed"`
	Duration time.Duration `json:"duration_ns"`
}

// SummaryCounts says where a run's page summaries came from.
type SummaryCounts struct {
	// Model is the summary model; "" for extractive summaries by choice.
	Model string `json:"model,omitempty"`
	// FromModel counts the pages whose summary the model wrote: Reused of them from the previous index, Kept
	// from the ledger, the others asked this run.
	FromModel int `json:"from_model"`
	Reused    int `json:"reused"`
	Kept      int `json:"kept"`
	// Fallback counts the pages that kept the extractive line because the model's call failed.
	Fallback int `json:"fallback"`
}

// ErrNoPages is returned when the source yields no usable page.
var ErrNoPages = errors.New("no usable pages")

// Run ingests cfg.Source into cfg.IndexDir, with the index directory's edits applied (see Edits).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	if cfg.Source == "" || cfg.IndexDir == "" {
		return nil, errors.New("ingest: source and index directory are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Edits == nil {
		e, err := LoadEdits(cfg.IndexDir)
		if err != nil {
			return nil, fmt.Errorf("ingest: %w", err)
		}
		cfg.Edits = e
	}
	r := &Report{}
	run := newRun(cfg, r)
	// Decoding the previous index takes about as long as reading the site again; pages are read and hashed
	// meanwhile (see fetchAndClean). The goroutine ends once the load does.
	go func() {
		defer close(run.prevReady)
		if cfg.Full {
			run.tokLoad.start()
			return
		}
		// Texts and vectors stay in the previous version's files: the pages kept read theirs from there, and the
		// new version takes rows of the mapped vectors, which stay valid while run.prev holds the index (until
		// Run returns, after the write).
		prev, err := index.LoadWith(cfg.IndexDir, index.LoadOptions{TextsOnDisk: true, MapVectors: true})
		if err != nil && !errors.Is(err, index.ErrNoIndex) {
			cfg.Logger.Warn("previous index unreadable; rebuilding everything", "err", err)
		}
		run.prev = newReuse(prev, run.settings(), tokenizer.EncodingName)
		if run.prev == nil {
			run.tokLoad.start() // a first build chunks every page
		}
	}()

	defer func() {
		<-run.prevReady
		run.prev.close()
	}()
	if err := run.openSpill(); err != nil {
		return nil, err
	}
	defer run.closeSpill()
	docs, err := run.fetchAndClean(ctx)
	if err != nil {
		return nil, err
	}
	<-run.prevReady
	if docs, err = run.applyEdits(docs); err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("ingest %s: %w (%d fetched, %d unreadable)", cfg.Source, ErrNoPages, r.Fetched, r.Unreadable)
	}
	if err := run.build(ctx, docs); err != nil {
		return nil, err
	}
	r.Duration = time.Since(start)
	cfg.Logger.Info("ingest done", "pages", r.Pages, "chunks", r.Chunks, "links", r.Links, "reused", r.Reused,
		"removed", r.Removed, "duplicates", r.Duplicates, "unreadable", r.Unreadable, "version", r.Version,
		"duration", r.Duration.Round(time.Millisecond))
	return r, nil
}

func newRun(cfg Config, r *Report) *run {
	return &run{cfg: cfg, report: r, progress: newProgress(cfg.Progress, cfg.OnProgress),
		prevReady: make(chan struct{}), tokLoad: newTokenizerLoad()}
}

// build runs the stages after reading on docs (sorted by URL) and writes the version when its content changed.
func (r *run) build(ctx context.Context, docs []*doc) error {
	if err := r.openPaid(); err != nil {
		return err
	}
	defer r.paid.close()
	if err := r.buildStages(ctx, docs); err != nil {
		return r.explain(err)
	}
	if l := r.paid.ledger; l != nil {
		// Everything this version uses was read or written; what it does not is of no use to the next run.
		if err := l.Compact(); err != nil {
			r.cfg.Logger.Warn("ledger: compaction failed", "err", err)
		}
	}
	return nil
}

// buildStages is build once the ledger is open.
func (r *run) buildStages(ctx context.Context, docs []*doc) error {
	// The texts wait on disk from cleaning on (put pages and an Apply's pages from here); the index reads them
	// from the texts file the chunk stage seals, which becomes the version's texts.bin.
	for _, d := range docs {
		if err := r.keep(d); err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
	}
	ix := r.graph(docs)
	if err := r.chunk(ctx, ix, docs); err != nil {
		return err
	}
	if err := r.spill.Seal(filepath.Join(r.spillDir, "texts.bin"), ix, r.pageRefs, r.chunkRefs); err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	defer ix.Close()
	if err := r.summarise(ctx, ix); err != nil {
		return err
	}
	if err := r.communities(ix); err != nil {
		return err
	}
	if err := r.embed(ctx, ix); err != nil {
		return err
	}
	if err := r.finishManifest(ix); err != nil {
		return err
	}
	rep := r.report
	rep.Version = ix.Manifest.Version
	rep.Changed = r.prev == nil || r.prev.ix.Manifest.Version != ix.Manifest.Version
	if r.prev != nil {
		rep.Removed = r.prev.removed(ix)
	}
	// An unchanged version is the live index already: writing it again would cost as much as a first build
	// (index.Write would build the copy only to discard it).
	if rep.Changed {
		// The search structures are built here once rather than by every server that loads the version.
		opts := index.WriteOptions{Keep: r.cfg.KeepVersions, Protect: r.cfg.ProtectVersions,
			Files: append(retrieval.SearchFilesOf(ix), r.copiesFile()...)}
		if err := index.WriteWith(r.cfg.IndexDir, ix, opts); err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
	} else if dir := r.prev.ix.Dir(); dir != "" {
		if err := r.refreshCopies(dir); err != nil {
			// The record only spares the next ingest the parsing of the PDFs it names.
			r.cfg.Logger.Warn("updating the record of PDF copies failed", "dir", dir, "err", err)
		}
	}
	return nil
}

// run holds the state of one Run.
type run struct {
	cfg       Config
	tok       *tokenizer.Tokenizer // set by chunk when some page needs splitting
	prev      *reuse               // set before prevReady is closed
	prevReady chan struct{}        // closed once the previous index is loaded (or known absent)
	tokLoad   *tokenizerLoad
	report    *Report
	progress  *progress
	embedder  embedding.Embedder
	embState  []byte
	// paid is what the run asks models for: the ledger and the tokens used.
	paid *paid
	// copies are the PDFs left out as copies of the site's pages (see dropCopies), for the version's record.
	copies []copyRecord
	// boilerplate is the key of the site template left out of the chunks (see template), for the manifest.
	boilerplate string
	// fromChunk[i] is the previous index's chunk that new chunk i repeats with the same search text, or -1.
	fromChunk []int
	// crawled says the pages came from a crawl (not a mirror), so the index keeps a crawl record.
	crawled bool
	// forced are the URLs of put pages, which the index keeps whatever link cleaning and sections say.
	forced map[string]bool
	// precleaned says the docs' links were cleaned already (Apply: they come from the previous version), so
	// graph keeps them as they are instead of cleaning them again.
	precleaned bool
	// refreshes, when set, are the crawl record's meta refreshes, carried over from the previous version.
	refreshes []index.Refresh
	// spill holds the texts on disk as pages are cleaned and chunked (see keep), in spillDir; pageRefs and
	// chunkRefs are the index's pages' and chunks' texts in it.
	spill               *index.Spill
	spillDir            string
	pageRefs, chunkRefs []index.TextRef
}

// doc is a cleaned page on its way into the index.
type doc struct {
	url, title, markdown string // markdown until it is spilled (see run.keep), then md
	pdf                  bool   // the page is a PDF document (see dropCopies)
	copy                 bool   // a PDF the previous version left out as a copy, its bytes unchanged: not read
	// shingles are a copy's recorded sample of its text (see copyRecord), page its response, read if it is no
	// longer a copy.
	shingles      []byte
	page          *crawl.Page
	md            index.TextRef
	spilled       bool
	hash, rawHash string
	links         []string    // the page's links, those to dropped duplicates redirected to the copy kept
	discovered    []string    // the page's links as crawled, for the crawl record
	reused        *index.Page // the previous index's page when the body is unchanged
	faq           []index.FAQEntry
	// The response the page was built from, for the next crawl's conditional requests.
	etag, lastModified, source string
	fetched                    time.Time
	refreshes                  []crawl.Refresh
	// lang is the page's language as its own signals tell it (pageLanguage); "" when none is sure. declared
	// says the page's markup or response declared it (or a previous ingest settled it).
	lang     string
	declared bool
	// alternates are the page's hreflang links.
	alternates []clean.Alternate
	// anchors are the ids of the page's sections.
	anchors []index.Anchor
}

// openSpill creates the run's spill in a temporary directory of the index directory, which closeSpill
// removes.
func (r *run) openSpill() error {
	if err := os.MkdirAll(r.cfg.IndexDir, 0o755); err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	dir, err := os.MkdirTemp(r.cfg.IndexDir, ".tmp-texts-")
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	if r.spill, err = index.NewSpill(filepath.Join(dir, "spill")); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("ingest: %w", err)
	}
	r.spillDir = dir
	return nil
}

func (r *run) closeSpill() {
	if r.spill != nil {
		r.spill.Close()
		os.RemoveAll(r.spillDir)
	}
}

// keep moves d's markdown to the spill: a large site's cleaned pages are most of what ingest would otherwise
// hold (ten copies of the Berkeley guide: 400 MB).
func (r *run) keep(d *doc) error {
	if d.spilled {
		return nil
	}
	ref, err := r.spill.Add(d.markdown)
	if err != nil {
		return err
	}
	d.md, d.markdown, d.spilled = ref, "", true
	return nil
}

// isMirror reports whether source names a local directory rather than a URL.
func isMirror(source string) bool {
	if u, err := url.Parse(source); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		return false
	}
	st, err := os.Stat(source)
	return err == nil && st.IsDir()
}

// faqVersion is the version of the FAQ extraction (package faq) whose entries the pages keep.
const faqVersion = 1

// settings are the ingest parameters that shape the index content; they enter the version.
func (r *run) settings() json.RawMessage {
	b, _ := json.Marshal(struct {
		Clean       clean.Config
		Links       links.Config
		Chunk       chunk.Config
		Boilerplate boilerplate.Config
		Graph       leiden.CommunityConfig
		Summary     summary.ExtractiveConfig
		// FAQ is the FAQ extraction's version: a page cleaned by an earlier one is cleaned again.
		FAQ int
		// Cleaner is the cleaner's version (clean.Version), for the same reason.
		Cleaner int
	}{r.cfg.Clean, r.cfg.Links, r.cfg.Chunk, r.cfg.Boilerplate, r.cfg.Graph, r.cfg.Summary, faqVersion, clean.Version})
	return b
}

func (r *run) finishManifest(ix *index.Index) error {
	m := &ix.Manifest
	m.Pages, m.Chunks = len(ix.Pages), len(ix.Chunks)
	m.Tokenizer = tokenizer.EncodingName
	m.SearchText = index.SearchTextVersion
	m.Embedder, m.Dimension = r.embedder.Name(), r.embedder.Dimension()
	m.Summarizer = "extractive"
	if r.cfg.Summarizer != nil {
		m.Summarizer = r.cfg.Summarizer.Model
		if m.Summarizer == "" {
			m.Summarizer = summary.DefaultModel
		}
	}
	m.Hashes = make(map[string]string, len(ix.Pages))
	m.BuiltAt = time.Now().UTC()
	m.RagproxyVersion = r.cfg.Version
	m.Source = r.cfg.Source
	m.Settings = r.settings()
	m.Boilerplate = r.boilerplate
	links := 0
	for _, p := range ix.Pages {
		m.Hashes[p.URL] = p.Hash
		links += len(p.Links)
	}
	m.Links = links
	ix.EmbedderState = r.embState
	m.Usage = r.paid.usage()
	r.report.Usage = m.Usage
	v, err := contentVersion(ix)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	m.Version = v
	r.report.Pages, r.report.Chunks, r.report.Links = m.Pages, m.Chunks, links
	return nil
}

// contentVersion hashes everything retrieval sees, so equal content gives an equal version and any change a new one.
func contentVersion(ix *index.Index) (string, error) {
	h := sha256.New()
	m := ix.Manifest
	// The file format counts as content: an index rewritten in a new format is a new version, so an unchanged
	// site still moves to the new layout.
	fmt.Fprintf(h, "%s\x00%d\x00%s\x00%s\x00%s\x00%d\x00%d\x00", m.Embedder, m.Dimension, m.Tokenizer, m.Summarizer,
		m.Settings, m.SearchText, index.Format)
	h.Write(ix.EmbedderState)
	for _, p := range ix.Pages {
		fmt.Fprintf(h, "p\x00%s\x00%s\x00%s\x00%s\x00%d\x00%v\x00", p.URL, p.Hash, p.Title, p.Summary, p.Community, p.Links)
		// A page's language chooses how it is searched; English, the language every page had before pages had
		// one, leaves the version as it was.
		if !textnorm.IsEnglish(p.Lang) || len(p.Versions) > 0 {
			fmt.Fprintf(h, "l\x00%s\x00%v\x00", p.Lang, p.Versions)
		}
		// A page's section anchors open its quotes' links at their sections, and change with its markup while
		// its text may not; a page without any leaves the version as it was before pages had them.
		for _, a := range p.Anchors {
			fmt.Fprintf(h, "a\x00%s\x00%s\x00", a.Heading, a.ID)
		}
		for _, f := range p.FAQ { // FAQ markup (JSON-LD) may change while the cleaned text does not
			fmt.Fprintf(h, "f\x00%s\x00%s\x00%s\x00%q\x00", f.Question, f.Answer, f.URL, f.Alternatives)
		}
	}
	err := ix.EachText(func(page bool, id int, text string) error {
		if !page {
			fmt.Fprintf(h, "c\x00%d\x00%s\x00", ix.Chunks[id].PageID, text)
		}
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))[:16], err
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// tokenizerLoad loads the BPE ranks (a fifth of a second) in the background once started: as soon as a first
// build begins, so that it overlaps reading and cleaning; a re-ingest loads them only when a page it keeps has
// changed, so an unchanged site never pays for them.
type tokenizerLoad struct {
	once sync.Once
	done chan struct{}
	tok  *tokenizer.Tokenizer
	err  error
}

func newTokenizerLoad() *tokenizerLoad { return &tokenizerLoad{done: make(chan struct{})} }

// start begins the load unless it has begun; the goroutine ends with it.
func (l *tokenizerLoad) start() {
	l.once.Do(func() {
		go func() {
			defer close(l.done)
			l.tok, l.err = tokenizer.New()
		}()
	})
}

// get starts the load if needed and waits for it.
func (l *tokenizerLoad) get() (*tokenizer.Tokenizer, error) {
	l.start()
	<-l.done
	return l.tok, l.err
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

// Lines describe the ingest into indexDir for the terminal, as `ragproxy ingest` prints them.
func (rep *Report) Lines(indexDir string) []string {
	out := []string{fmt.Sprintf("indexed %d pages (%d reused, %d removed, %d duplicates, %d unreadable), %d chunks, %d links into %s (version %s) in %s",
		rep.Pages, rep.Reused, rep.Removed, rep.Duplicates, rep.Unreadable, rep.Chunks, rep.Links, indexDir,
		rep.Version, rep.Duration.Round(time.Millisecond))}
	if s := rep.Summaries; s.Model != "" {
		out = append(out, fmt.Sprintf("summaries %s: %d of %d pages from the model (%d reused, %d from the ledger), %d kept the extractive line",
			s.Model, s.FromModel, rep.Pages, s.Reused, s.Kept, s.Fallback))
	}
	if rep.KeptVectors > 0 {
		out = append(out, fmt.Sprintf("vectors: %d taken from the ledger, %d embedded", rep.KeptVectors, rep.Embedded))
	}
	out = append(out, index.UsageLines(rep.Usage)...)
	if rep.Requests > 0 {
		out = append(out, fmt.Sprintf("crawled %d pages (%d not modified) in %d requests, %.1f MB of bodies", rep.Fetched,
			rep.NotModified, rep.Requests, float64(rep.FetchedBytes)/1e6))
	}
	return out
}
