package index

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Stats summarises an index for `ragproxy stats`.
type Stats struct {
	Version             string      `json:"version"`
	Pages               int         `json:"pages"`
	Chunks              int         `json:"chunks"`
	Links               int         `json:"links"`
	Communities         int         `json:"communities"`
	Modularity          float64     `json:"modularity"`
	SmallComponentPages int         `json:"small_component_pages"`
	ChunkTokens         TokenCounts `json:"chunk_tokens"`
	Embedder            string      `json:"embedder"`
	Dimension           int         `json:"dimension"`
	Tokenizer           string      `json:"tokenizer"`
	Summarizer          string      `json:"summarizer"`
	// ModelSummaries counts the pages whose summary the model wrote; FallbackSummaries those that kept the
	// extractive line because the model's call failed (0 when the summaries are extractive by choice).
	ModelSummaries    int `json:"model_summaries"`
	FallbackSummaries int `json:"fallback_summaries"`
	// Usage is what the ingest that built the version asked models for (Manifest.Usage).
	Usage   []Usage `json:"usage,omitempty"`
	BuiltAt string  `json:"built_at"`
	// FAQEntries counts the FAQ entries the pages mark up, on FAQPages pages.
	FAQEntries int `json:"faq_entries"`
	FAQPages   int `json:"faq_pages"`
	// Revalidatable counts the pages a re-crawl can ask for conditionally (an ETag or a Last-Modified).
	Revalidatable int `json:"revalidatable_pages"`
	// SectionAnchors counts the sections that an offline answer's links can open a page at (Page.Anchors), on
	// AnchoredPages pages.
	SectionAnchors int `json:"section_anchors"`
	AnchoredPages  int `json:"anchored_pages"`
	// Format is the version's file layout; Files are its files with their sizes, by name (for an index loaded
	// from disk).
	Format int        `json:"format"`
	Files  []FileSize `json:"files,omitempty"`
	// Languages count the pages (and their chunks) per language, the main language first; VersionedPages
	// counts the pages that have versions in other languages.
	Languages      []LanguageStats `json:"languages"`
	VersionedPages int             `json:"versioned_pages"`
}

// LanguageStats counts the pages and chunks in one language.
type LanguageStats struct {
	Lang   string `json:"lang"`
	Pages  int    `json:"pages"`
	Chunks int    `json:"chunks"`
}

// FileSize is a file of an index version and its size in bytes.
type FileSize struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
}

// TokenCounts are percentiles of chunk sizes in tokens.
type TokenCounts struct {
	P50 int `json:"p50"`
	P95 int `json:"p95"`
	Max int `json:"max"`
}

// ComputeStats describes ix.
func ComputeStats(ix *Index) Stats {
	m := ix.Manifest
	tokens := make([]int, len(ix.Chunks))
	for i, c := range ix.Chunks {
		tokens[i] = c.Tokens
	}
	sort.Ints(tokens)
	var tc TokenCounts
	if n := len(tokens); n > 0 {
		tc = TokenCounts{P50: tokens[(n-1)*50/100], P95: tokens[(n-1)*95/100], Max: tokens[n-1]}
	}
	links, faqs, faqPages, revalidatable, model, fallback, anchors, anchored := 0, 0, 0, 0, 0, 0, 0, 0
	for _, p := range ix.Pages {
		links += len(p.Links)
		if len(p.FAQ) > 0 {
			faqs, faqPages = faqs+len(p.FAQ), faqPages+1
		}
		if p.ETag != "" || p.LastModified != "" {
			revalidatable++
		}
		if len(p.Anchors) > 0 {
			anchors, anchored = anchors+len(p.Anchors), anchored+1
		}
		switch {
		case p.SummaryModel != "":
			model++
		case m.Summarizer != "extractive" && m.Summarizer != "":
			fallback++
		}
	}
	var langs []LanguageStats
	for _, lc := range ix.Languages() {
		langs = append(langs, LanguageStats{Lang: lc.Lang, Pages: lc.Pages})
	}
	versioned := 0
	for i, p := range ix.Pages {
		if len(p.Versions) > 0 {
			versioned++
		}
		for k := range langs {
			if langs[k].Lang == ix.PageLang(i) {
				langs[k].Chunks += len(p.Chunks)
			}
		}
	}
	return Stats{
		Languages: langs, VersionedPages: versioned,
		Version: m.Version, Pages: len(ix.Pages), Chunks: len(ix.Chunks), Links: links,
		Communities: m.Communities, Modularity: m.Modularity, SmallComponentPages: m.SmallComponentPages,
		ChunkTokens: tc, Embedder: m.Embedder, Dimension: m.Dimension, Tokenizer: m.Tokenizer,
		Summarizer: m.Summarizer, BuiltAt: m.BuiltAt.UTC().Format("2006-01-02T15:04:05Z"),
		FAQEntries: faqs, FAQPages: faqPages, Revalidatable: revalidatable, SectionAnchors: anchors, AnchoredPages: anchored, Format: m.Format, Files: versionFiles(ix.dir),
		ModelSummaries: model, FallbackSummaries: fallback, Usage: m.Usage,
	}
}

// versionFiles lists the files of a version directory by name; none for "".
func versionFiles(dir string) []FileSize {
	if dir == "" {
		return nil
	}
	entries, _ := os.ReadDir(dir)
	var out []FileSize
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			out = append(out, FileSize{Name: e.Name(), Bytes: info.Size()})
		}
	}
	return out
}

// Write writes the statistics of the index in dir to w: as indented JSON, or as Lines.
func (st Stats) Write(w io.Writer, dir string, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	for _, line := range st.Lines(dir) {
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

// Lines describe the index in dir for the terminal, as `ragproxy stats` prints them.
func (st Stats) Lines(dir string) []string {
	files := make([]string, len(st.Files))
	for i, f := range st.Files {
		files[i] = fmt.Sprintf("%s %.1f MB", f.Name, float64(f.Bytes)/1e6)
	}
	out := []string{
		fmt.Sprintf("index %s (version %s, built %s)", dir, st.Version, st.BuiltAt),
		fmt.Sprintf("  pages %d, chunks %d, links %d", st.Pages, st.Chunks, st.Links),
		fmt.Sprintf("  communities %d (modularity %.3f), pages in small components %d", st.Communities, st.Modularity, st.SmallComponentPages),
		fmt.Sprintf("  chunk tokens p50 %d, p95 %d, max %d (%s)", st.ChunkTokens.P50, st.ChunkTokens.P95, st.ChunkTokens.Max, st.Tokenizer),
		fmt.Sprintf("  embedder %s (dimension %d), summaries %s", st.Embedder, st.Dimension, st.Summarizer),
	}
	if st.Summarizer != "extractive" {
		out = append(out, fmt.Sprintf("  summaries from the model %d, extractive fallbacks %d", st.ModelSummaries, st.FallbackSummaries))
	}
	for _, line := range UsageLines(st.Usage) {
		out = append(out, "  "+line)
	}
	langs := make([]string, len(st.Languages))
	for i, l := range st.Languages {
		langs[i] = fmt.Sprintf("%s %d pages (%d chunks)", l.Lang, l.Pages, l.Chunks)
	}
	if len(langs) > 0 {
		out = append(out, fmt.Sprintf("  languages: %s; pages with versions in other languages %d", strings.Join(langs, ", "), st.VersionedPages))
	}
	return append(out,
		fmt.Sprintf("  FAQ entries in page markup %d on %d pages; pages a re-crawl can revalidate %d", st.FAQEntries, st.FAQPages, st.Revalidatable),
		fmt.Sprintf("  section anchors %d on %d pages", st.SectionAnchors, st.AnchoredPages),
		fmt.Sprintf("  format %d: %s", st.Format, strings.Join(files, ", ")))
}

// UsageLines describe what a build paid the model for, per stage and model, with the estimated cost, and the
// total when there are several.
func UsageLines(us []Usage) []string {
	var out []string
	total := 0.0
	for _, u := range us {
		cost := "no price for this model (--price)"
		if u.Priced {
			cost = fmt.Sprintf("about $%.4f", u.CostUSD)
			total += u.CostUSD
		}
		tokens := fmt.Sprintf("%d tokens", u.PromptTokens)
		if u.CompletionTokens > 0 {
			tokens = fmt.Sprintf("%d prompt + %d completion tokens", u.PromptTokens, u.CompletionTokens)
		}
		out = append(out, fmt.Sprintf("%s (%s): %s, %s", u.Stage, u.Model, tokens, cost))
	}
	if len(us) > 1 {
		out = append(out, fmt.Sprintf("estimated cost in all: $%.4f", total))
	}
	return out
}
