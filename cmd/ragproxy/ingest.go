package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/ragproxy/ragproxy/admin"
	"github.com/ragproxy/ragproxy/backends"
	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest"
	"github.com/ragproxy/ragproxy/ingest/crawl"
	"github.com/ragproxy/ragproxy/ingest/summary"
	"github.com/ragproxy/ragproxy/llm"
	"github.com/ragproxy/ragproxy/serve"
	"github.com/ragproxy/ragproxy/upstream"
)

// repeated is a flag that may be given several times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// upstreamFlags are the upstream settings ingest, eval and serve share for LLM and embedding calls.
type upstreamFlags struct {
	url, key, model, embedder, embeddingModel string
	embeddingDims                             int
	// embedBatch, embedTokens and embedConcurrency shape the embeddings requests (0: the embedder's defaults).
	embedBatch, embedTokens, embedConcurrency int
	// pacer, when set, paces the chat and embeddings requests of the key together (batch jobs only).
	pacer *upstream.Pacer
}

func (u *upstreamFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&u.url, "upstream-url", envOr("OPENAI_BASE_URL", defaultUpstreamURL), "OpenAI-compatible API base URL (OPENAI_BASE_URL)")
	fs.StringVar(&u.model, "model", envOr("RAGPROXY_MODEL", "gpt-4o-mini"), "chat model for summaries, analysis and answers (RAGPROXY_MODEL)")
	fs.StringVar(&u.embedder, "embedder", envOr("RAGPROXY_EMBEDDER", "auto"), "auto (openai when OPENAI_API_KEY is set, else local), local or openai (RAGPROXY_EMBEDDER)")
	fs.StringVar(&u.embeddingModel, "embedding-model", envOr("RAGPROXY_EMBEDDING_MODEL", "text-embedding-3-large"), "embedding model for --embedder openai (RAGPROXY_EMBEDDING_MODEL)")
	fs.IntVar(&u.embeddingDims, "embedding-dimensions", envInt("RAGPROXY_EMBEDDING_DIMENSIONS", 0), "ask the embedding model for shorter vectors; 0 keeps its size (RAGPROXY_EMBEDDING_DIMENSIONS)")
}

// online reports whether an upstream key is configured.
func (u *upstreamFlags) online() bool { return u.key != "" }

// ask is the upstream as the proxy's own client (its timeouts and retry rules) adapted to llm.Ask, asking for
// --model unless a prompt names its model.
func (u *upstreamFlags) ask() (llm.Ask, error) {
	c, err := upstream.New(upstream.Config{Primary: upstream.Endpoint{Name: "primary", BaseURL: u.url, APIKey: u.key, Model: u.model, Pacer: u.pacer}})
	if err != nil {
		return nil, err
	}
	return upstream.Asker{Client: c, Model: u.model}.Ask, nil
}

func (u *upstreamFlags) client() openai.Client {
	return openai.NewClient(option.WithBaseURL(u.url), option.WithAPIKey(u.key), option.WithMaxRetries(2),
		option.WithMiddleware(upstream.InMemoryBody))
}

// openaiEmbedder returns the upstream embedder when one is chosen, nil for the local one.
func (u *upstreamFlags) openaiEmbedder() (embedding.Embedder, error) {
	return embedding.Choose(u.embedder, u.embedConfig())
}

// embedConfig is the OpenAI-compatible embedder the flags describe.
func (u *upstreamFlags) embedConfig() embedding.OpenAIConfig {
	return embedding.OpenAIConfig{BaseURL: u.url, APIKey: u.key, Model: u.embeddingModel, Dimensions: u.embeddingDims,
		BatchSize: u.embedBatch, BatchTokens: u.embedTokens, Concurrency: u.embedConcurrency, Pacer: u.pacer}
}

func runIngest(ctx context.Context, args []string) error {
	o, err := parseIngestArgs(args, os.Stderr)
	if err != nil {
		return err
	}
	o.cfg.Progress = os.Stderr
	o.cfg.Logger = newLogger(os.Stderr, "info")
	rep, synced, syncErr := (&admin.Ingest{Config: o.cfg, Sync: serve.Syncer(o.backends.Config)}).Run(ctx)
	if rep == nil {
		return syncErr
	}
	cfg := o.cfg
	if o.jsonOut {
		out := struct {
			*ingest.Report
			Backends *backends.SyncReport `json:"backends,omitempty"`
		}{rep, nil}
		if o.backends.Configured() {
			out.Backends = synced
		}
		if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
			return err
		}
		return syncErr
	}
	for _, line := range rep.Lines(cfg.IndexDir) {
		fmt.Println(line)
	}
	if w := o.up.pacer.Waited(); w > 0 {
		fmt.Printf("waited %s in all for the upstream's rate limits\n", w.Round(time.Millisecond))
	}
	if synced != nil {
		for _, line := range synced.Lines() {
			fmt.Println(line)
		}
	}
	return syncErr
}

// ingestOptions are an ingest's settings as its command line gives them: `ragproxy ingest` and the admin API's
// ingest jobs both parse them with parseIngestArgs.
type ingestOptions struct {
	cfg      ingest.Config
	up       upstreamFlags
	backends backendFlags
	jsonOut  bool
}

// parseIngestArgs parses ingest's command line (SOURCE, then flags, or flags then SOURCE) into options with the
// summarizer and embedder chosen; usage and flag errors are written to out. Progress and Logger are left for the
// caller to set.
func parseIngestArgs(args []string, out io.Writer) (*ingestOptions, error) {
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: ragproxy ingest SOURCE --index DIR [flags]\n\nSOURCE is a start URL (crawl) or a directory of saved pages (mirror, with --base-url).")
		fs.PrintDefaults()
	}
	var (
		o            ingestOptions
		sections     repeated
		removes      repeated
		summaries    string
		summaryModel string
		maxBytes     int64
	)
	cfg := &o.cfg
	fs.StringVar(&cfg.IndexDir, "index", envOr("RAGPROXY_INDEX", ""), "index directory to write (RAGPROXY_INDEX)")
	fs.StringVar(&cfg.BaseURL, "base-url", "", "URL of the mirror's root directory: DIR/a/b/index.html is BASE/a/b/")
	fs.BoolVar(&cfg.Full, "full", false, "ignore the existing index and recompute everything")
	fs.StringVar(&cfg.Crawl.Prefix, "prefix", "", "crawl only paths under this prefix")
	fs.IntVar(&cfg.Crawl.MaxDepth, "depth", 15, "crawl depth limit")
	fs.IntVar(&cfg.Crawl.Concurrency, "concurrency", 4, "concurrent crawl requests")
	fs.DurationVar(&cfg.Crawl.Delay, "delay", 100*time.Millisecond, "polite delay between requests to the host (negative: none)")
	fs.Int64Var(&maxBytes, "max-page-bytes", 5<<20, "skip pages larger than this")
	fs.IntVar(&cfg.Crawl.MaxPages, "max-pages", crawl.DefaultMaxPages, "stop the crawl after this many pages (negative: no limit)")
	fs.DurationVar(&cfg.Crawl.MaxCrawlDelay, "max-crawl-delay", crawl.DefaultMaxCrawlDelay, "longest robots.txt Crawl-delay honoured")
	fs.BoolVar(&cfg.Crawl.AllowPrivate, "allow-private", false, "allow crawling private and loopback addresses")
	fs.BoolVar(&cfg.Crawl.NoSitemaps, "no-sitemaps", false, "crawl from the start URL only, not also from /sitemap.xml and the sitemaps robots.txt lists")
	fs.BoolVar(&cfg.Crawl.TrustLastmod, "trust-lastmod", false, "re-crawl: skip pages whose sitemap lastmod is not after their last fetch, instead of asking conditionally")
	fs.StringVar(&cfg.Clean.ContentSelector, "content-selector", "", "CSS selector of the main content (default: detected)")
	fs.Var(&removes, "remove-selector", "CSS selector removed from the content (repeatable)")
	fs.Var(&sections, "section", "URL prefix selecting a subset of the site plus the pages it links to (repeatable)")
	fs.Float64Var(&cfg.Links.BoilerplateShare, "link-boilerplate-share", 0.30, "drop links found on more than this share of pages")
	fs.IntVar(&cfg.Chunk.MinTokens, "chunk-min-tokens", 200, "chunks grow to this many tokens before an H1-H2 may end them")
	fs.IntVar(&cfg.Chunk.H3Tokens, "chunk-h3-tokens", 300, "from this size an H3 may end a chunk")
	fs.IntVar(&cfg.Chunk.H4Tokens, "chunk-h4-tokens", 400, "from this size an H4 or three blank lines may end a chunk")
	fs.IntVar(&cfg.Chunk.TwoBlankTokens, "chunk-two-blank-tokens", 500, "from this size two blank lines may end a chunk")
	fs.IntVar(&cfg.Chunk.ListItemTokens, "chunk-list-item-tokens", 600, "from this size a list item may end a chunk")
	fs.IntVar(&cfg.Chunk.BlankTokens, "chunk-blank-tokens", 800, "from this size any blank line may end a chunk")
	fs.IntVar(&cfg.Chunk.DropTokens, "chunk-drop-tokens", 10, "drop chunks of this many tokens or fewer")
	fs.IntVar(&cfg.Chunk.MaxTokens, "chunk-max-tokens", 1200, "hard upper bound of a chunk")
	fs.IntVar(&cfg.Graph.MinComponent, "min-component", 10, "components smaller than this get community 9999")
	fs.StringVar(&summaries, "summaries", "auto", "auto (llm when OPENAI_API_KEY is set), llm or extractive")
	fs.IntVar(&cfg.KeepVersions, "keep-versions", envInt("RAGPROXY_KEEP_VERSIONS", index.DefaultKeepVersions), "index versions kept on disk, to switch back to with the admin API (RAGPROXY_KEEP_VERSIONS)")
	fs.IntVar(&cfg.SummaryConcurrency, "summary-concurrency", 4, "concurrent LLM summary calls")
	fs.StringVar(&summaryModel, "summary-model", envOr("RAGPROXY_SUMMARY_MODEL", ""), "chat model for page summaries; default --model (RAGPROXY_SUMMARY_MODEL)")
	fs.IntVar(&o.up.embedBatch, "embedding-batch-size", 2048, "most inputs per embeddings request (OpenAI's cap: 2048)")
	fs.IntVar(&o.up.embedTokens, "embedding-batch-tokens", 280_000, "most tokens per embeddings request, counted as the model counts them (OpenAI's cap: 300000)")
	fs.IntVar(&o.up.embedConcurrency, "embedding-concurrency", 2, "concurrent embeddings requests")
	cfg.Prices = map[string]ingest.Price{}
	fs.Func("price", "MODEL=INPUT,OUTPUT: US dollars per million tokens for the cost estimate, overriding the built-in table (repeatable)", func(v string) error {
		model, p, err := ingest.ParsePrice(v)
		if err == nil {
			cfg.Prices[model] = p
		}
		return err
	})
	fs.BoolVar(&o.jsonOut, "json", false, "print the report as JSON")
	o.up.register(fs)
	o.backends.register(fs)
	source, rest := splitSource(args)
	var err error
	if err = fs.Parse(rest); err != nil {
		return nil, err
	}
	if source == "" && fs.NArg() > 0 {
		source = fs.Arg(0)
	}
	if source == "" || cfg.IndexDir == "" {
		fs.Usage()
		return nil, fmt.Errorf("ingest: SOURCE and --index are required")
	}
	if fs.NArg() > 1 || (fs.NArg() == 1 && fs.Arg(0) != source) {
		return nil, fmt.Errorf("ingest: unexpected arguments %q", fs.Args())
	}
	o.up.key = os.Getenv("OPENAI_API_KEY")
	// One pacer for the key: summaries and embeddings wait out its limits together.
	o.up.pacer = upstream.NewPacer(upstream.PacerConfig{})
	o.backends.readSecrets()
	cfg.Source = source
	cfg.Crawl.MaxBytes = maxBytes
	cfg.Links.Sections = sections
	cfg.Clean.RemoveSelectors = removes
	cfg.Version = version
	switch summaries {
	case "extractive":
	case "llm", "auto":
		if o.up.online() {
			ask, err := o.up.ask()
			if err != nil {
				return nil, fmt.Errorf("ingest: %w", err)
			}
			cfg.Summarizer = &summary.LLM{Ask: ask, Model: cmp.Or(summaryModel, o.up.model)}
		} else if summaries == "llm" {
			return nil, fmt.Errorf("ingest: --summaries llm needs OPENAI_API_KEY")
		}
	default:
		return nil, fmt.Errorf("ingest: --summaries %q: want auto, llm or extractive", summaries)
	}
	if cfg.Embedder, err = o.up.openaiEmbedder(); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	if cfg.Crawl.AllowPrivate {
		cfg.Crawl.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	return &o, nil
}

// ingestJob parses an admin ingest job's command line as `ragproxy ingest` does.
func ingestJob(args []string, out io.Writer) (*admin.Ingest, error) {
	o, err := parseIngestArgs(args, out)
	if err != nil {
		return nil, err
	}
	return &admin.Ingest{Config: o.cfg, Sync: serve.Syncer(o.backends.Config)}, nil
}

// splitSource lets SOURCE come before the flags, as in `ragproxy ingest https://site/ --index DIR`.
func splitSource(args []string) (string, []string) {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args[0], args[1:]
	}
	return "", args
}

func runStats(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("stats", flag.ContinueOnError)
	dir := fs.String("index", envOr("RAGPROXY_INDEX", ""), "index directory (RAGPROXY_INDEX)")
	jsonOut := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("stats: --index is required")
	}
	ix, err := index.Load(*dir)
	if err != nil {
		return fmt.Errorf("stats: %w", err)
	}
	return index.ComputeStats(ix).Write(os.Stdout, *dir, *jsonOut)
}
