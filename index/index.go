// Package index defines the on-disk index that ingest writes and retrieval reads: pages with their cleaned
// markdown, summaries, links and communities; chunks; summary and chunk vectors; a manifest; and, for a crawled
// site, the crawl record a re-crawl starts from.
//
// An index directory holds one subdirectory per version and a CURRENT file naming the live one. Write builds a
// new version in a temporary directory, renames it into place and only then replaces CURRENT (write and rename),
// so a crash mid-write leaves the previous version readable and a half-written version is never read. Write keeps
// the newest few versions, so that Activate can switch back to one.
//
// The types are plain data; an *Index is safe for concurrent reads once loaded.
package index

import (
	"encoding/json"
	"time"
)

// SmallComponentCommunity is the community id given to pages in weakly connected components under the
// small-component size (the FHNW prototype: "a default community_id of 9999").
const SmallComponentCommunity = 9999

// Page is one cleaned page of the site.
type Page struct {
	// ID is the page's position in Index.Pages.
	ID int `json:"id"`
	// URL is the canonical absolute URL.
	URL   string `json:"url"`
	Title string `json:"title"`
	// Section is the configured URL prefix the page was selected by, if any.
	Section string `json:"section,omitempty"`
	// Summary is one dense line describing the page (LLM or extractive).
	Summary string `json:"summary"`
	// SummaryModel is the model that wrote Summary; empty for an extractive summary (also one kept because the
	// model's call failed, so that a re-ingest asks again).
	SummaryModel string `json:"summary_model,omitempty"`
	// Markdown is the cleaned main content. An index loaded with its texts left on disk has it empty: read it
	// with Index.PageMarkdown.
	Markdown string `json:"markdown,omitempty"`
	// Hash is the hex SHA-256 of Markdown.
	Hash string `json:"hash"`
	// RawHash is the hex SHA-256 of the fetched body; an unchanged body lets re-ingest skip cleaning and chunking.
	RawHash string `json:"raw_hash,omitempty"`
	// ETag and LastModified are the validators of the response the page was built from (RFC 9110 section 8.8),
	// which a re-crawl sends back as If-None-Match and If-Modified-Since; empty when the server sent none or the
	// page came from a mirror.
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	// Fetched is when that response arrived; a re-crawl compares it with the sitemap's lastmod.
	Fetched time.Time `json:"fetched,omitzero"`
	// Source is the URL that answered with the page when it is not URL: a page that names URL as its
	// canonical. A re-crawl asks Source conditionally.
	Source string `json:"source,omitempty"`
	// Links are the ids of pages this page links to after link cleaning (LINKS_TO).
	Links []int `json:"links,omitempty"`
	// Component is the page's weakly connected component.
	Component int `json:"component"`
	// Community is the page's Leiden community, or SmallComponentCommunity.
	Community int `json:"community"`
	// Chunks are the ids of the page's chunks in page order (HAS_CHUNK).
	Chunks []int `json:"chunks"`
	// FAQ are the frequently asked questions the page marks up, with their answers.
	FAQ []FAQEntry `json:"faq,omitempty"`
	// Lang is the page's language, an ISO 639 primary subtag ("en", "de", "ja"): from its markup, its
	// Content-Language or its hreflang links, else detected from its text, else the site's main language.
	// Empty in an index built before pages had languages, where every page is English. Its chunks are in
	// the same language (Index.ChunkLang).
	Lang string `json:"lang,omitempty"`
	// Versions are the ids of the page's versions in other languages (hreflang links, or the same path under
	// another language's folder), in id order; nil when it has none.
	Versions []int `json:"versions,omitempty"`
	// Anchors are the ids that address the page's sections, by their headings; nil for a page whose sections
	// have none (and in an index built before pages had them).
	Anchors []Anchor `json:"anchors,omitempty"`
}

// Anchor addresses a section of a page: the id a link's fragment names ("#sect.apt-file"), by the section's
// heading as markdown.Headings reads it from the page's markdown. A page has at most one anchor per heading text.
type Anchor struct {
	Heading string `json:"heading"`
	ID      string `json:"id"`
}

// Anchor is the id of the page's section under heading, "" when it has none.
func (p *Page) Anchor(heading string) string {
	for _, a := range p.Anchors {
		if a.Heading == heading {
			return a.ID
		}
	}
	return ""
}

// FAQEntry is a question a page marks up as frequently asked, with its answer.
type FAQEntry struct {
	Question string `json:"question"`
	Answer   string `json:"answer"`
	// URL is the page's URL, with the question's fragment when it has one.
	URL          string   `json:"url"`
	Alternatives []string `json:"alternatives,omitempty"`
	// Source is the markup it was found in: "jsonld", "details", "dl" or "heading".
	Source string `json:"source"`
}

// Chunk is a contiguous passage of a page's markdown.
type Chunk struct {
	// ID is the chunk's position in Index.Chunks.
	ID     int `json:"id"`
	PageID int `json:"page_id"`
	// Ord is the chunk's position within its page.
	Ord int `json:"ord"`
	// Text is empty in an index loaded with its texts left on disk: read it with Index.ChunkText.
	Text string `json:"text"`
	// Tokens is the o200k_base token count of Text.
	Tokens int `json:"tokens"`
}

// Manifest describes an index version.
type Manifest struct {
	// Version identifies the content: it changes whenever pages, chunks, summaries, vectors or settings do.
	Version string `json:"version"`
	// Format is the layout of the version's files (Format when written by this binary; 0 for the JSON-only
	// layout of earlier releases, which Load still reads).
	Format              int     `json:"format,omitempty"`
	Pages               int     `json:"pages"`
	Chunks              int     `json:"chunks"`
	Links               int     `json:"links"`
	Communities         int     `json:"communities"`
	Modularity          float64 `json:"modularity"`
	SmallComponentPages int     `json:"small_component_pages"`
	// Embedder names the embedding model ("local-..." or the upstream model name).
	Embedder  string `json:"embedder"`
	Dimension int    `json:"dimension"`
	Tokenizer string `json:"tokenizer"`
	// SearchText is the SearchTextVersion the chunk vectors were computed under.
	SearchText int `json:"search_text"`
	// Summarizer is "extractive" or the LLM model that wrote the summaries.
	Summarizer string `json:"summarizer"`
	// Hashes maps each page URL to the hex SHA-256 of its markdown.
	Hashes  map[string]string `json:"hashes"`
	BuiltAt time.Time         `json:"built_at"`
	// RagproxyVersion is the version of the binary that wrote the index.
	RagproxyVersion string `json:"ragproxy_version"`
	// Source is the start URL or mirror directory the index was built from.
	Source string `json:"source"`
	// Settings records the ingest settings that shaped the content (thresholds, selectors, sections).
	Settings json.RawMessage `json:"settings,omitempty"`
	// Boilerplate identifies the site template blocks left out of the chunks (ingest/boilerplate's Set.Key); ""
	// when none were.
	Boilerplate string `json:"boilerplate,omitempty"`
	// Usage is what the ingest that built the version asked models for, per stage; empty when it asked none.
	// It is not content: it leaves Version as it is.
	Usage []Usage `json:"usage,omitempty"`
}

// Usage counts the tokens one ingest stage ("summaries", "embeddings") was billed by one model, with their
// estimated cost.
type Usage struct {
	Stage            string `json:"stage"`
	Model            string `json:"model"`
	PromptTokens     int    `json:"prompt_tokens"`
	CompletionTokens int    `json:"completion_tokens,omitempty"`
	// CostUSD is the estimate from the price table; Priced says the model was in it.
	CostUSD float64 `json:"cost_usd"`
	Priced  bool    `json:"priced"`
}

// CrawlRecord is what the crawl that built a version learnt beyond the pages' content, so that a re-crawl whose
// pages answer 304 Not Modified (no body to read links from) still discovers the same pages as a full crawl: every
// same-host link each page holds (Page.Links keeps only those that survive link cleaning) and the meta refresh
// pages the crawl passed through. An index built from a mirror has none.
type CrawlRecord struct {
	// URLs is the table that Links refers to; a site repeats its navigation on every page, so each URL is
	// written once.
	URLs []string `json:"urls"`
	// Links[i] are the links found on Pages[i], in document order, as positions in URLs.
	Links [][]int32 `json:"links"`
	// Refreshes are the pages that were a meta refresh to another URL.
	Refreshes []Refresh `json:"refreshes,omitempty"`
}

// Refresh is a page whose answer was a meta refresh to Target, with the validators of that answer.
type Refresh struct {
	URL          string    `json:"url"`
	Target       string    `json:"target"`
	ETag         string    `json:"etag,omitempty"`
	LastModified string    `json:"last_modified,omitempty"`
	Fetched      time.Time `json:"fetched,omitzero"`
}

// Index is a loaded index version.
type Index struct {
	Manifest Manifest
	Pages    []Page
	Chunks   []Chunk
	// SummaryVectors[i] embeds Pages[i].Summary; ChunkVectors[i] embeds Chunks[i].Text. Rows are unit length.
	// Loaded rows are consecutive parts of one array: read them, never append to one.
	SummaryVectors [][]float32
	ChunkVectors   [][]float32
	// EmbedderState is opaque state the embedder needs at query time (the local embedder's IDF table); may be nil.
	EmbedderState []byte
	// Crawl is what the crawl learnt for the next one; nil for an index built from a mirror.
	Crawl *CrawlRecord

	dir   string     // the version directory the index was loaded from, if it was
	texts *diskTexts // set once the texts are left on disk (see textsToDisk)
	maps  []*mapping // files mapped into memory for the index's lifetime (LoadOptions.MapVectors, MapFile)
	// chunkVecs, when set, is the vector file ChunkVectors were read from (VectorFile.SealChunks).
	chunkVecs *fileRows
}

// PageByURL returns the page with the given URL.
func (ix *Index) PageByURL(url string) (*Page, bool) {
	for i := range ix.Pages {
		if ix.Pages[i].URL == url {
			return &ix.Pages[i], true
		}
	}
	return nil, false
}
