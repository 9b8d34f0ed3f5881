package embedding

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"golang.org/x/sync/errgroup"
)

// OpenAIConfig configures an OpenAI embedder. Only APIKey (for servers that check one) and usually BaseURL need
// setting.
type OpenAIConfig struct {
	// BaseURL is the API root including /v1. Default "https://api.openai.com/v1".
	BaseURL string
	// APIKey is sent as a bearer token. Secret: log only Redacted().
	APIKey string
	// Model is the embedding model. Default "text-embedding-3-large".
	Model string
	// Dimensions asks the model for shorter vectors (text-embedding-3 models only). Default 0: the model's own
	// size, learned from the first response.
	Dimensions int
	// BatchSize is the number of inputs per request. Default 128.
	BatchSize int
	// Concurrency is the number of requests in flight. Default 2.
	Concurrency int
	// MaxRetries is how often a request is retried after a connection error, 408, 409, 429 or 5xx, with
	// exponential backoff from 0.5 s (or the server's Retry-After). Default 4; negative disables retries.
	MaxRetries int
	// Timeout bounds each attempt. Default 60s.
	Timeout time.Duration
	// HTTPClient sends the requests. Default http.DefaultClient's transport with the SDK's settings.
	HTTPClient *http.Client
}

// Redacted returns a copy safe to log: the API key is masked.
func (c OpenAIConfig) Redacted() OpenAIConfig {
	if c.APIKey != "" {
		c.APIKey = "REDACTED"
	}
	return c
}

func (c OpenAIConfig) withDefaults() OpenAIConfig {
	if c.BaseURL == "" {
		c.BaseURL = "https://api.openai.com/v1"
	}
	if c.Model == "" {
		c.Model = "text-embedding-3-large"
	}
	if c.BatchSize <= 0 {
		c.BatchSize = 128
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 2
	}
	if c.MaxRetries == 0 {
		c.MaxRetries = 4
	} else if c.MaxRetries < 0 {
		c.MaxRetries = 0
	}
	if c.Timeout <= 0 {
		c.Timeout = 60 * time.Second
	}
	return c
}

// OpenAI embeds texts with an OpenAI-compatible /v1/embeddings endpoint (OpenAI, Azure-style gateways, Ollama,
// vLLM, TEI) through the official SDK, which also performs the retries. It is safe for concurrent use.
type OpenAI struct {
	cfg    OpenAIConfig
	client openai.Client
	dim    atomic.Int64
}

var _ Embedder = (*OpenAI)(nil)

// NewOpenAI returns an embedder for cfg. It does not contact the server.
func NewOpenAI(cfg OpenAIConfig) *OpenAI {
	cfg = cfg.withDefaults()
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(cfg.MaxRetries),
		option.WithRequestTimeout(cfg.Timeout),
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	e := &OpenAI{cfg: cfg, client: openai.NewClient(opts...)}
	e.dim.Store(int64(cfg.Dimensions))
	return e
}

// Dimension returns the configured dimensions, else the size the server returned, else 0 before the first call.
func (e *OpenAI) Dimension() int { return int(e.dim.Load()) }

// Name returns the model, with the requested dimensions when set ("text-embedding-3-large@256").
func (e *OpenAI) Name() string {
	if e.cfg.Dimensions > 0 {
		return fmt.Sprintf("%s@%d", e.cfg.Model, e.cfg.Dimensions)
	}
	return e.cfg.Model
}

// Embed sends texts in batches of BatchSize, Concurrency at a time, and returns unit-length rows in the order
// of texts (rows are placed by each response item's index, whatever order the server sends them in). Blank
// texts are not sent (the API rejects empty input) and embed as zero vectors.
func (e *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var send []int // positions of non-blank texts
	for i, t := range texts {
		if strings.TrimSpace(t) != "" {
			send = append(send, i)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(e.cfg.Concurrency)
	for start := 0; start < len(send); start += e.cfg.BatchSize {
		batch := send[start:min(start+e.cfg.BatchSize, len(send))]
		g.Go(func() error {
			inputs := make([]string, len(batch))
			for j, i := range batch {
				inputs[j] = texts[i]
			}
			rows, err := e.embedBatch(gctx, inputs)
			if err != nil {
				return fmt.Errorf("embed: openai: batch at %d: %w", start, err)
			}
			for j, i := range batch {
				out[i] = rows[j]
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	dim := e.Dimension()
	for i := range out {
		if out[i] == nil {
			out[i] = make([]float32, dim)
		}
	}
	return out, nil
}

func (e *OpenAI) embedBatch(ctx context.Context, inputs []string) ([][]float32, error) {
	params := openai.EmbeddingNewParams{
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: inputs},
		Model:          e.cfg.Model,
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	}
	if e.cfg.Dimensions > 0 {
		params.Dimensions = openai.Int(int64(e.cfg.Dimensions))
	}
	resp, err := e.client.Embeddings.New(ctx, params)
	if err != nil {
		return nil, err
	}
	if len(resp.Data) != len(inputs) {
		return nil, fmt.Errorf("%d embeddings for %d inputs", len(resp.Data), len(inputs))
	}
	rows := make([][]float32, len(inputs))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= int64(len(inputs)) || rows[d.Index] != nil {
			return nil, fmt.Errorf("embedding index %d out of range or repeated", d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embedding %d is empty", d.Index)
		}
		// The first response fixes the dimension; every later row must agree.
		e.dim.CompareAndSwap(0, int64(len(d.Embedding)))
		if want := e.dim.Load(); int64(len(d.Embedding)) != want {
			return nil, fmt.Errorf("embedding %d has %d dimensions, want %d", d.Index, len(d.Embedding), want)
		}
		v := make([]float32, len(d.Embedding))
		for k, x := range d.Embedding {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("embedding %d has a non-finite value", d.Index)
			}
			v[k] = float32(x)
		}
		normalize(v)
		rows[d.Index] = v
	}
	return rows, nil
}
