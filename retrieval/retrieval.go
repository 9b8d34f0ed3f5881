// Package retrieval finds the pages and passages of an index that answer a conversation, following the FHNW prototype's
// complete system: query rewrites, page search over summaries (dense) and page text (BM25) fused by reciprocal
// rank, community-based selection of pages, chunk search inside those pages, and a context assembled per page
// within a token budget. It also holds the query analysis and the grounding of answers (prompt, sources,
// guardrails).
//
// A Retriever is immutable after New and safe for concurrent use.
package retrieval

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/markdown"
	"github.com/ragproxy/ragproxy/retrieval/lexical"
	"github.com/ragproxy/ragproxy/retrieval/vector"
	"github.com/ragproxy/ragproxy/retrieval/wordnet"
	"github.com/ragproxy/ragproxy/tokenizer"
)

// Page lists the retrieval can draw on to rank pages; Config.PageLists picks a subset (the eval ablations do).
const (
	// ListSummaryDense is dense search over page summaries (the FHNW prototype's main signal).
	ListSummaryDense = "summary-dense"
	// ListPageBM25 is BM25 over each page's title and text.
	ListPageBM25 = "page-bm25"
	// ListChunkBM25 ranks pages by their best BM25 chunk.
	ListChunkBM25 = "chunk-bm25"
	// ListChunkDense ranks pages by their best dense chunk.
	ListChunkDense = "chunk-dense"
	// ListTitleBM25 is BM25 over each page's title, URL path and headings.
	ListTitleBM25 = "title-bm25"
	// ListTitleMatch ranks pages whose whole title (or its parenthesised code) the query names.
	ListTitleMatch = "title-match"
	// ListDefinition ranks the pages that define the code names the query writes (see definingPages).
	ListDefinition = "definition"
)

// Config holds retrieval's constants; the zero value of each field selects the FHNW prototype's value.
type Config struct {
	// PageLists are the ranked lists fused to rank pages; default DefaultPageLists, all of them.
	PageLists []string
	// ListWeights scales each page list's reciprocal-rank contribution; a list not named weighs 1. Default
	// DefaultListWeights.
	ListWeights map[string]float64
	// PagesPerList is how many pages each list contributes; default 36.
	PagesPerList int
	// FusedPages is how many fused pages go to community selection; default 12.
	FusedPages int
	// KeepPages is how many pages community selection keeps; default 8.
	KeepPages int
	// NoCommunities skips community selection and keeps the top KeepPages fused pages.
	NoCommunities bool
	// ProtectPages is how many of the best fused pages community selection always keeps; default 6. Negative
	// means 0, the FHNW prototype's rule where community frequency alone decides (it loses pages on the Berkeley
	// questions: see eval's ablations).
	ProtectPages int
	// ChunksPerList is how many chunks dense and BM25 chunk search return per query; default 128.
	ChunksPerList int
	// ChunkDenseWeight scales the dense lists against the BM25 lists when chunks are fused; default 1, negative
	// means 0 (BM25 alone).
	ChunkDenseWeight float64
	// PageBoost scales each fused chunk score by 1 + PageBoost/(1 + its page's rank among the kept pages);
	// default 0.5, negative means none.
	PageBoost float64
	// KeepChunks is how many fused chunks the context may use; default 40.
	KeepChunks int
	// NoPassageRerank keeps the fused chunk order instead of reranking the candidate chunks by how many of the
	// question's terms one window of each holds (see selectPassages; eval ablations).
	NoPassageRerank bool
	// NoSectionPassages lets the passage windows of passage reranking run across markdown headings, from one
	// section into the next; by default a window stays within a section and its subsections, so that a listing
	// page's neighbouring items do not add up to a passage no page holds (see selectPassages; eval ablations).
	NoSectionPassages bool
	// NoQuantities does not count a quantity (a number, a size, a date) in a passage window as one more term of a
	// question that asks for one ("how long", "max size"; see quantities.go; eval ablations).
	NoQuantities bool
	// EvidenceOff switches signals of evidence selection off (see Retriever.Evidence; eval ablations); the zero
	// value uses them all.
	EvidenceOff EvidenceSignals
	// RRFK is the reciprocal rank fusion constant; zero means the number of fused lists, the FHNW prototype's choice,
	// which beats the usual 60 on the Berkeley questions (eval ablations). RRFRankBase is the rank of a list's first
	// item: 0 (the FHNW prototype's) or 1 (the usual).
	RRFK        float64
	RRFRankBase int
	// NoRewrites searches with the question alone (eval ablation).
	NoRewrites bool
	// NoWordNet leaves WordNet out of query expansion and passage selection: the synonyms of the question's
	// words (see synonyms), the bases of its comparatives and superlatives (see degreeBase) and the words related
	// to its words that passages count as theirs (see passageForms; eval ablations).
	NoWordNet bool
	// Analysis switches parts of the BM25 lists' analysis off (stemming, compound parts, CJK bigrams; eval
	// ablations); the zero value is the full analysis. A retriever whose Analysis changes (WithConfig) builds
	// its BM25 indexes again.
	Analysis lexical.Analyzer
	// ContextTokens bounds the context in o200k tokens; default 12000 (fewer cut the fact-bearing chunks of pages
	// with large tables on the Berkeley questions; the FHNW prototype sent its 40 chunks whole, about 16000).
	ContextTokens int
	// PassagePrior reorders the kept pages by the passages found on them: each page's score is multiplied by
	// (0.05 + c)^PassagePrior, c the best coverage of the question among its candidate chunks (see
	// rankByPassages); default 0.5, negative means none (eval ablations). Without passage reranking there is no
	// coverage and the order stays.
	PassagePrior float64
	// LeadRatio lets a BM25 page list (page-bm25, chunk-bm25) vote twice for its first page when that page's
	// score is at least LeadRatio times the next page's (see leadingPage); default 1.4 (eval on the four dev
	// sites: 1.3 and below cost the Berkeley questions, 1.5 and above found fewer), negative means never (eval
	// ablations).
	LeadRatio float64
	// LinkPrior scales each fused page score by 1 + LinkPrior·ln(1 + inbound links), a prior for pages the
	// site itself points to; default 0.2, negative means none (eval ablations).
	LinkPrior float64
	// ExactChunkSearch searches every chunk vector for the chunk-dense page list even when the index has IVF
	// lists (an index of vector.IVFMinRows chunks or more), instead of the lists nearest the query.
	ExactChunkSearch bool
	// ConfidenceFloor is the similarity below which retrieval counts as empty; default 0.10. With the local
	// embedder, similarities of unrelated questions (0.15-0.22 on the Berkeley index) overlap those of answerable
	// ones, so the floor only catches questions that share almost nothing with the site.
	ConfidenceFloor float64
	// LexicalConfidenceFloor is the confidence floor of a retrieval without query vectors (see degraded.go), a
	// share of the question's terms; default DefaultLexicalConfidenceFloor.
	LexicalConfidenceFloor float64
	// EmbedTimeout bounds the query's embedding, the embedder's retries included; when it runs out (or the
	// embedder fails) the question is answered from the lexical lists alone (see degraded.go). Default 0: no
	// bound but the request's own. A limit on waiting, not a setting of the ranking: the response cache's key
	// leaves it out.
	EmbedTimeout time.Duration `json:"-"`
}

// DefaultPageLists are the page lists used when Config.PageLists is empty.
var DefaultPageLists = []string{ListSummaryDense, ListPageBM25, ListChunkBM25, ListChunkDense, ListTitleBM25, ListTitleMatch,
	ListDefinition}

// DefaultListWeights weigh the chunk BM25 and title BM25 lists, the strongest alone, twice the others (eval on
// the Berkeley questions, local embedder, extractive summaries; the ablations compare equal weights).
var DefaultListWeights = map[string]float64{ListSummaryDense: 0.5, ListPageBM25: 0.5, ListChunkDense: 0.5, ListTitleMatch: 0.5}

// DefaultConfig is the configuration the zero Config selects, every field filled in: the one place retrieval's
// defaults are written, which the command-line flags show as theirs.
func DefaultConfig() Config { return Config{}.withDefaults() }

func (c Config) withDefaults() Config {
	if len(c.PageLists) == 0 {
		c.PageLists = DefaultPageLists
	}
	if c.ListWeights == nil {
		c.ListWeights = DefaultListWeights
	}
	if c.ChunkDenseWeight == 0 {
		c.ChunkDenseWeight = 1
	}
	c.ChunkDenseWeight = max(c.ChunkDenseWeight, 0)
	if c.ProtectPages == 0 {
		c.ProtectPages = 6
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.PagesPerList, 36)
	def(&c.FusedPages, 12)
	def(&c.KeepPages, 8)
	def(&c.ChunksPerList, 128)
	def(&c.KeepChunks, 40)
	def(&c.ContextTokens, 12000)
	c.RRFRankBase = max(c.RRFRankBase, 0)
	if c.PageBoost == 0 {
		c.PageBoost = 0.5
	}
	c.PageBoost = max(c.PageBoost, 0)
	if c.PassagePrior == 0 {
		c.PassagePrior = 0.5
	}
	c.PassagePrior = max(c.PassagePrior, 0)
	if c.LeadRatio == 0 {
		c.LeadRatio = 1.4
	}
	c.LeadRatio = max(c.LeadRatio, 0)
	if c.LinkPrior == 0 {
		c.LinkPrior = 0.2
	}
	c.LinkPrior = max(c.LinkPrior, 0)
	if c.ConfidenceFloor == 0 {
		c.ConfidenceFloor = 0.10
	}
	if c.LexicalConfidenceFloor == 0 {
		c.LexicalConfidenceFloor = DefaultLexicalConfidenceFloor
	}
	return c
}

// Retriever searches one loaded index.
type Retriever struct {
	ix        *index.Index
	emb       embedding.Embedder
	tok       *tokenizer.Tokenizer
	cfg       Config
	pageBM25  *lexical.BM25
	chunkBM25 *lexical.BM25
	summaries vector.Index
	chunks    *vector.Flat
	chunkANN  *vector.IVF // set for an index large enough that exact search over its chunks is slow
	titles    *lexical.BM25
	named     *titleIndex
	lex       *lexicon
	inLinks   []int    // inbound links per page
	textKeys  []uint64 // per chunk, a hash of its trimmed text: chunks that say the same are one passage
	// contextTokens holds per chunk its size in tokens as the context writes it (chunkTexts.compact), plus one;
	// 0 until a retrieval first counts it. The size depends on the chunk alone, and counting it again for every
	// question was a quarter of a retrieval's time on a site whose passages link a lot.
	contextTokens []atomic.Int32
	backends      Backends
	scope         *Scope
	allowed       []bool   // per page, when scope is set
	langs         []string // the index's languages, main first
	versioned     bool     // some page has versions in other languages
	qlang         string   // the question's language when it is not English (inLanguage)
}

// ErrEmbedderMismatch is returned by New when the embedder is not the one the index was built with.
var ErrEmbedderMismatch = errors.New("embedder does not match the index")

// New prepares searches over ix, building its search structures from the texts. emb must be the embedder the
// index was built with.
func New(ix *index.Index, emb embedding.Embedder, tok *tokenizer.Tokenizer, cfg Config) (*Retriever, error) {
	if err := checkEmbedder(ix, emb); err != nil {
		return nil, err
	}
	var parts *searchParts
	var err error
	preload(cfg, true, func() { parts, err = buildParts(ix, true, cfg.Analysis) })
	if err != nil {
		return nil, fmt.Errorf("retrieval: %w", err)
	}
	return newRetriever(ix, emb, tok, cfg, parts)
}

func checkEmbedder(ix *index.Index, emb embedding.Embedder) error {
	if emb.Name() != ix.Manifest.Embedder || emb.Dimension() != 0 && emb.Dimension() != ix.Manifest.Dimension {
		return fmt.Errorf("retrieval: %w: index has %s (%d), embedder is %s (%d)", ErrEmbedderMismatch,
			ix.Manifest.Embedder, ix.Manifest.Dimension, emb.Name(), emb.Dimension())
	}
	return nil
}

// preload runs prepare with WordNet's decoding (once per process, about 0.3 s: here rather than on the first
// question) beside it when parallel is set, else after it.
func preload(cfg Config, parallel bool, prepare func()) {
	if cfg.NoWordNet {
		prepare()
		return
	}
	if !parallel {
		prepare()
		wordnet.Load()
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { wordnet.Load() })
	prepare()
	wg.Wait()
}

// newRetriever puts together a retriever over ix from its search structures.
func newRetriever(ix *index.Index, emb embedding.Embedder, tok *tokenizer.Tokenizer, cfg Config, parts *searchParts) (*Retriever, error) {
	summaries, err := vector.NewFlat(ix.SummaryVectors)
	if err != nil {
		return nil, fmt.Errorf("retrieval: summary vectors: %w", err)
	}
	chunkVecs, err := vector.NewFlat(ix.ChunkVectors)
	if err != nil {
		return nil, fmt.Errorf("retrieval: chunk vectors: %w", err)
	}
	ann := parts.ann
	if ann == nil && len(parts.annData) > 0 {
		if ann, err = readChunkLists(ix, parts.annData); err != nil {
			return nil, fmt.Errorf("retrieval: %s: chunk lists: %w", SearchFile, err)
		}
	}
	r := &Retriever{ix: ix, emb: emb, tok: tok, cfg: cfg.withDefaults(), summaries: summaries, chunks: chunkVecs,
		inLinks: make([]int, len(ix.Pages)), named: newTitleIndex(ix.Pages, ix.PageLang), chunkBM25: parts.chunkBM25,
		pageBM25: parts.pageBM25, titles: parts.titles, lex: parts.lex, textKeys: parts.textKeys,
		contextTokens: make([]atomic.Int32, len(ix.Chunks))}
	if ann != nil && ann.Lists() > 0 {
		r.chunkANN = ann
	}
	for _, p := range ix.Pages {
		for _, l := range p.Links {
			r.inLinks[l]++
		}
		r.versioned = r.versioned || len(p.Versions) > 0
	}
	r.langs = siteLanguages(ix)
	return r, nil
}

// Index returns the index the retriever searches.
func (r *Retriever) Index() *index.Index { return r.ix }

// Embedder returns the embedder of the queries.
func (r *Retriever) Embedder() embedding.Embedder { return r.emb }

// Config returns the retriever's configuration with defaults applied.
func (r *Retriever) Config() Config { return r.cfg }

// WithConfig returns a retriever over the same index and search structures with another configuration.
func (r *Retriever) WithConfig(cfg Config) *Retriever {
	c := *r
	c.cfg = cfg.withDefaults()
	if c.cfg.Analysis != r.cfg.Analysis {
		// An ablation of the analysis: the BM25 indexes analysed the texts the other way.
		if parts, err := buildParts(r.ix, false, c.cfg.Analysis); err == nil {
			c.pageBM25, c.chunkBM25, c.titles = parts.pageBM25, parts.chunkBM25, parts.titles
		}
	}
	return &c
}

// PageHit is a retrieved page.
type PageHit struct {
	ID        int
	URL       string
	Title     string
	Summary   string
	Community int
	Score     float64
}

// ChunkHit is a retrieved passage.
type ChunkHit struct {
	ID     int
	PageID int
	URL    string
	Text   string
	Score  float64
}

// EvidenceSignals name the signals of evidence selection (Retriever.Evidence), for switching them off.
type EvidenceSignals struct {
	// Kinds is the kind of answer a question asks for (a duration, a size, an amount, a date, a person, a
	// command; see answertype.go).
	Kinds bool
	// Context is the terms a unit's heading, page title and topic line hold for it.
	Context bool
	// Shapes are the answer shapes "how many" and "what is" questions ask for: a number beside the counted word,
	// a sentence defining the subject; and a unit naming a default or stating a bound, for a question that asks for one.
	Shapes bool
	// Anaphora is reading a sentence that refers back ("This RAID level …") with the sentence before it.
	Anaphora bool
	// Code is the lower score of a code block.
	Code bool
	// Length is the lower score of a unit longer than a sentence, and more so of one longer than two.
	Length bool
	// Rank is the rank of the unit's passage.
	Rank bool
}

// Result is what retrieval found for one query.
type Result struct {
	Query string
	// Turn is the latest message of the conversation when Query completes it with the one before (a follow-up:
	// see Analysis.Standalone and RetrieveFor); "" when Query is the message itself. An answer's units weigh
	// the words of Turn over those only the earlier message gave, and take the kind of answer it asks for.
	Turn     string
	Rewrites []string
	// Lang is the language the question was analysed in (Retriever.QuestionLanguage), an ISO 639 code.
	Lang    string
	Pages   []PageHit
	Chunks  []ChunkHit
	Context string
	// ContextTokens is the o200k size of Context, summed over its parts (within a few tokens of counting it whole).
	ContextTokens int
	// Confidence is the best cosine similarity between a query and a selected chunk or summary; for a Degraded
	// retrieval, the lexical confidence (see lexicalConfidence).
	Confidence float64
	// Degraded, when set, says why the query had no vectors (DegradedEmbedTimeout, DegradedEmbedError): the
	// pages and passages come from the lexical lists alone. DegradedCause is the embedder's error.
	Degraded      string
	DegradedCause error
	// Empty reports that nothing scored above the confidence floor.
	Empty bool
	// Durations are the stage timings, keyed by the stage names (Stages).
	Durations map[string]time.Duration
}

// The stages of a retrieval, the keys of Result.Durations and the stage label of the metrics. The query analysis
// runs before Retrieve (see Analyzer); its caller records its time under StageAnalysis.
const (
	StageAnalysis    = "analysis"
	StageEmbed       = "embed"
	StagePages       = "pages"
	StageCommunities = "communities"
	StageChunks      = "chunks"
	StageContext     = "context"
)

// Stages returns the stages of a retrieval in the order they run.
func Stages() []string {
	return []string{StageAnalysis, StageEmbed, StagePages, StageCommunities, StageChunks, StageContext}
}

// RetrieveFor runs retrieval for an analysis: its Query and rewrites, and a follow-up's own message as the
// result's Turn.
func (r *Retriever) RetrieveFor(ctx context.Context, a Analysis) (*Result, error) {
	res, err := r.Retrieve(ctx, a.Query(), a.Rewrites)
	if err == nil && a.Standalone != "" {
		res.Turn = a.Question
	}
	return res, err
}

// Retrieve runs retrieval for a question and its rewrites (analysis already done; see Analyzer).
func (r *Retriever) Retrieve(ctx context.Context, question string, rewrites []string) (*Result, error) {
	res := &Result{Query: question, Rewrites: rewrites, Durations: map[string]time.Duration{}}
	res.Lang = r.QuestionLanguage(question)
	r = r.inLanguage(res.Lang)
	queries := []string{question}
	// WordNet's words are English: a question in another language takes its own rewrites only.
	if !r.cfg.NoRewrites && r.qlang == "" {
		if x := r.lex.expand(question, r.wordNet()); x != "" {
			rewrites = append(rewrites[:len(rewrites):len(rewrites)], x)
			res.Rewrites = rewrites
		}
		queries = dedupe(append(queries, rewrites...))
	} else if !r.cfg.NoRewrites {
		queries = dedupe(append(queries, rewrites...))
	}
	t := time.Now()
	vecs, degraded, cause, err := r.embedQueries(ctx, queries)
	if err != nil {
		return nil, err
	}
	res.Durations[StageEmbed] = time.Since(t)
	if degraded != "" {
		res.Degraded, res.DegradedCause = degraded, cause
		r = r.lexicalOnly()
	}

	t = time.Now()
	same := sameQueries(queries, vecs)
	fused, err := r.rankPages(ctx, queries, vecs, same)
	if err != nil {
		return nil, fmt.Errorf("retrieve: %w", err)
	}
	fused = r.preferVersions(fused)
	res.Durations[StagePages] = time.Since(t)

	t = time.Now()
	communities, err := r.communities(ctx, fused)
	if err != nil {
		return nil, fmt.Errorf("retrieve: %w", err)
	}
	kept := r.selectPages(fused, communities)
	res.Durations[StageCommunities] = time.Since(t)

	t = time.Now()
	texts := r.newChunkTexts()
	chunks, cover, err := r.rankChunks(ctx, queries, vecs, same, kept, texts)
	if err != nil {
		return nil, fmt.Errorf("retrieve: %w", err)
	}
	kept = r.rankByPassages(kept, cover)
	res.Durations[StageChunks] = time.Since(t)

	t = time.Now()
	res.Pages, res.Chunks, res.Context, res.ContextTokens, err = r.assemble(kept, chunks, texts)
	if err != nil {
		return nil, fmt.Errorf("retrieve: %w", err)
	}
	floor := r.cfg.ConfidenceFloor
	if degraded != "" {
		res.Confidence, floor = r.lexicalConfidence(question, res), r.cfg.LexicalConfidenceFloor
	} else {
		res.Confidence = r.confidence(vecs, res)
	}
	res.Empty = len(res.Chunks) == 0 || res.Confidence < floor
	res.Durations[StageContext] = time.Since(t)
	return res, nil
}

// pageFields is what the title list searches: the title, the words of the URL path and the headings of
// text, the page's (their text: a heading's links add their words, not their targets').
func pageFields(p index.Page, text string) string {
	var b strings.Builder
	b.WriteString(p.Title)
	b.WriteString("\n")
	if i := strings.Index(p.URL, "://"); i >= 0 {
		if j := strings.IndexByte(p.URL[i+3:], '/'); j >= 0 {
			b.WriteString(strings.NewReplacer("/", " ", "-", " ", "_", " ").Replace(p.URL[i+3+j:]))
			b.WriteString("\n")
		}
	}
	for _, heading := range markdown.Headings(text) {
		b.WriteString(heading)
		b.WriteString("\n")
	}
	return b.String()
}

func dedupe(qs []string) []string {
	seen := map[string]bool{}
	out := qs[:0:0]
	for _, q := range qs {
		k := strings.ToLower(strings.TrimSpace(q))
		if k == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, strings.TrimSpace(q))
	}
	return out
}
