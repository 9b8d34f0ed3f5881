package embedding

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/tokenizer"
	"github.com/ragproxy/ragproxy/upstream"
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
	// BatchSize is the most inputs per request. Default and most 2048, OpenAI's cap (API reference, "Create
	// embeddings": "any array must be 2048 dimensions or less").
	BatchSize int
	// BatchTokens is the most tokens per request, counted as the model counts them (tokenizer.ForModel:
	// cl100k_base for text-embedding-3 and ada-002). Default 280,000: under OpenAI's 300,000 per request, with
	// a margin should the server count a text a few tokens apart. A request is also kept within the key's
	// tokens-per-minute limit once the Pacer has read it.
	BatchTokens int
	// MaxInputTokens is where one input is cut, in the same tokens. Default 8192, OpenAI's cap for every
	// embedding model.
	MaxInputTokens int
	// Concurrency is the number of requests in flight. Default 2.
	Concurrency int
	// MaxRetries is how often a request is retried after a connection error, 408, 409, 429 or 5xx, with
	// exponential backoff from 0.5 s (or the server's Retry-After). Rate-limit refusals waited out by the
	// Pacer do not count. Default 4; negative disables retries.
	MaxRetries int
	// Pacer, when set, paces the requests by the upstream's rate-limit headers (see upstream.Pacer) and is
	// stopped by a refusal no wait clears; share it with the chat client of the same key. Default nil.
	Pacer *upstream.Pacer
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
	if c.BatchSize <= 0 || c.BatchSize > maxBatchInputs {
		c.BatchSize = maxBatchInputs
	}
	if c.BatchTokens <= 0 {
		c.BatchTokens = 280_000
	}
	if c.MaxInputTokens <= 0 {
		c.MaxInputTokens = 8192
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

// maxBatchInputs is OpenAI's cap on the inputs of one embeddings request.
const maxBatchInputs = 2048

// OpenAI embeds texts with an OpenAI-compatible /v1/embeddings endpoint (OpenAI, Azure-style gateways, Ollama,
// vLLM, TEI) through the official SDK. It cuts requests by OpenAI's caps, counting tokens as the model does,
// retries, and paces by the upstream's limits when given a Pacer. It is safe for concurrent use.
type OpenAI struct {
	cfg    OpenAIConfig
	client openai.Client
	dim    atomic.Int64
	// used counts the tokens billed, from each response's usage (else as counted here).
	used atomic.Int64

	tokOnce sync.Once
	tok     *tokenizer.Tokenizer
	tokErr  error
}

var (
	_ Embedder    = (*OpenAI)(nil)
	_ Incremental = (*OpenAI)(nil)
	_ Metered     = (*OpenAI)(nil)
)

// Incremental is an Embedder that hands each vector back as soon as its request has answered, so that a caller
// can keep what was paid for even when a later request fails.
type Incremental interface {
	// EmbedEach embeds texts and calls put with each request's vectors (their positions in texts, and the
	// vectors), one call at a time, in no particular order; it stops at the first error, of a request or of put.
	EmbedEach(ctx context.Context, texts []string, put func(pos []int, vecs [][]float32) error) error
}

// Metered is an Embedder that counts the tokens it was billed.
type Metered interface {
	// TokensUsed returns the input tokens billed so far.
	TokensUsed() int64
}

// NewOpenAI returns an embedder for cfg. It does not contact the server.
func NewOpenAI(cfg OpenAIConfig) *OpenAI {
	cfg = cfg.withDefaults()
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithAPIKey(cfg.APIKey),
		// Retries are ours, so that each attempt passes the pacer and a spent quota is not asked again.
		option.WithMaxRetries(0),
		option.WithRequestTimeout(cfg.Timeout),
		option.WithMiddleware(upstream.InMemoryBody),
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

// Model returns the embedding model asked for.
func (e *OpenAI) Model() string { return e.cfg.Model }

// TokensUsed implements Metered.
func (e *OpenAI) TokensUsed() int64 { return e.used.Load() }

// Embed returns unit-length rows in the order of texts (see EmbedEach). Blank texts are not sent (the API
// rejects empty input) and embed as zero vectors.
func (e *OpenAI) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	err := e.EmbedEach(ctx, texts, func(pos []int, vecs [][]float32) error {
		for j, i := range pos {
			out[i] = vecs[j]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// input is one text on its way: its position, the text as sent (cut at MaxInputTokens) and its tokens.
type input struct {
	pos    int
	text   string
	tokens int
}

// EmbedEach implements Incremental. Requests hold at most BatchSize inputs and BatchTokens tokens (and no more
// than the key's tokens-per-minute limit), Concurrency at a time; an input longer than MaxInputTokens is cut
// there. Rows are placed by each response item's index, whatever order the server sends them in. Blank texts
// are not sent and embed as zero vectors, put once the dimension is known.
func (e *OpenAI) EmbedEach(ctx context.Context, texts []string, put func(pos []int, vecs [][]float32) error) error {
	tok, err := e.tokenizer()
	if err != nil {
		return fmt.Errorf("embed: openai: %w", err)
	}
	var send []input
	var blank []int
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			blank = append(blank, i)
			continue
		}
		n := tok.Count(t)
		if n > e.cfg.MaxInputTokens {
			t = tok.Truncate(t, e.cfg.MaxInputTokens)
			n = tok.Count(t)
		}
		send = append(send, input{pos: i, text: t, tokens: n})
	}
	// A failed request stops the batches not yet sent and the waits of those in flight (stop), but not the
	// requests in flight themselves (ctx): the upstream bills a request it has begun to answer, and its vectors
	// are put, so that a rerun does not pay for them again.
	stop, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var mu sync.Mutex // serialises put
	var wg sync.WaitGroup
	slots := make(chan struct{}, e.cfg.Concurrency)
	for lo := 0; lo < len(send); {
		// A slot is taken before the batch is cut, so that the cut uses the limits the answers so far stated.
		select {
		case slots <- struct{}{}:
		case <-stop.Done():
		}
		if stop.Err() != nil {
			break
		}
		hi, sum := lo, 0
		limit := e.batchTokens()
		for hi < len(send) && hi-lo < e.cfg.BatchSize && (hi == lo || sum+send[hi].tokens <= limit) {
			sum += send[hi].tokens
			hi++
		}
		batch := send[lo:hi]
		lo = hi
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			err := e.sendBatch(stop, ctx, batch, func(pos []int, vecs [][]float32) error {
				// Vectors that arrive after another request failed are still put: they were paid for.
				mu.Lock()
				defer mu.Unlock()
				return put(pos, vecs)
			})
			if err != nil {
				cancel(fmt.Errorf("embed: openai: batch at text %d: %w", batch[0].pos, err))
			}
		}()
	}
	wg.Wait()
	if stop.Err() != nil {
		return context.Cause(stop)
	}
	if len(blank) > 0 {
		dim := e.Dimension()
		vecs := make([][]float32, len(blank))
		for j := range vecs {
			vecs[j] = make([]float32, dim)
		}
		return put(blank, vecs)
	}
	return nil
}

func (e *OpenAI) tokenizer() (*tokenizer.Tokenizer, error) {
	e.tokOnce.Do(func() { e.tok, e.tokErr = tokenizer.NewEncoding(tokenizer.ForModel(e.cfg.Model)) })
	return e.tok, e.tokErr
}

// batchTokens is the most tokens the next request may hold.
func (e *OpenAI) batchTokens() int {
	n := e.cfg.BatchTokens
	if l := e.cfg.Pacer.TokenLimit(); l > 0 {
		n = min(n, l)
	}
	return n
}

// sendBatch sends one request, waiting for the pacer and retrying as configured, and puts its rows. A batch
// the upstream finds too large for the key's per-minute limit or its per-request cap is split in two. The waits
// and retries end with stop; a request sent ends only with ctx (see EmbedEach).
func (e *OpenAI) sendBatch(stop, ctx context.Context, batch []input, put func(pos []int, vecs [][]float32) error) error {
	tokens := 0
	for _, in := range batch {
		tokens += in.tokens
	}
	split := func() error {
		half := len(batch) / 2
		if err := e.sendBatch(stop, ctx, batch[:half], put); err != nil {
			return err
		}
		return e.sendBatch(stop, ctx, batch[half:], put)
	}
	retries, rateWaits := 0, 0
	for {
		if l := e.cfg.Pacer.TokenLimit(); len(batch) > 1 && l > 0 && tokens > l {
			// Cut before the limit was known, or the limit fell: no wait would let it through.
			return split()
		}
		ticket, err := e.cfg.Pacer.Wait(stop, tokens)
		if err != nil {
			return err
		}
		rows, err := e.embedBatch(ctx, batch, ticket)
		if err == nil {
			pos := make([]int, len(batch))
			for j, in := range batch {
				pos[j] = in.pos
			}
			return put(pos, rows)
		}
		if stop.Err() != nil {
			return context.Cause(stop)
		}
		if len(batch) > 1 && tooLarge(err, tokens, e.cfg.Pacer.TokenLimit()) {
			return split()
		}
		if e.cfg.Pacer.Refused(err) && rateWaits < 20 {
			rateWaits++
			continue
		}
		if upstream.Fatal(err) || !retryable(err) || retries >= e.cfg.MaxRetries {
			return err
		}
		if err := pause(stop, backoff(err, retries)); err != nil {
			return err
		}
		retries++
	}
}

// tooLarge reports whether err refuses a request of tokens tokens for its size: OpenAI's 400
// max_tokens_per_request, or a 429 for a request over the key's whole per-minute limit (limit), which no wait
// clears.
func tooLarge(err error, tokens, limit int) bool {
	var ae *compat.APIError
	if !errors.As(err, &ae) {
		return false
	}
	return ae.Code == "max_tokens_per_request" ||
		ae.Status == http.StatusTooManyRequests && limit > 0 && tokens > limit
}

// retryable reports whether a failed request may be sent again: a connection error, 408, 409, 429 or 5xx (the
// statuses the OpenAI SDKs retry).
func retryable(err error) bool {
	var ae *compat.APIError
	if !errors.As(err, &ae) {
		return false
	}
	if ae.Code == "upstream_unreachable" || ae.Code == "upstream_timeout" {
		return true
	}
	switch ae.Status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests:
		return true
	}
	return ae.Status >= 500
}

// backoff is the pause before retry n: the server's Retry-After (or the retry-after-ms the OpenAI SDKs read),
// else 0.5 s doubling, at most 8 s.
func backoff(err error, n int) time.Duration {
	var ae *compat.APIError
	if errors.As(err, &ae) && ae.RetryAfter != "" {
		if s, err := strconv.ParseFloat(strings.TrimSpace(ae.RetryAfter), 64); err == nil && s >= 0 && s <= 60 {
			return time.Duration(s * float64(time.Second))
		}
	}
	return min(500*time.Millisecond<<n, 8*time.Second)
}

func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

func (e *OpenAI) embedBatch(ctx context.Context, batch []input, ticket *upstream.Ticket) ([][]float32, error) {
	inputs := make([]string, len(batch))
	tokens := 0
	for j, in := range batch {
		inputs[j] = in.text
		tokens += in.tokens
	}
	params := openai.EmbeddingNewParams{
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: inputs},
		Model:          e.cfg.Model,
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	}
	if e.cfg.Dimensions > 0 {
		params.Dimensions = openai.Int(int64(e.cfg.Dimensions))
	}
	var res *http.Response
	resp, err := e.client.Embeddings.New(ctx, params, option.WithResponseInto(&res))
	if err != nil {
		var oe *openai.Error
		if errors.As(err, &oe) && oe.Response != nil {
			if ms := oe.Response.Header.Get("retry-after-ms"); ms != "" && oe.Response.Header.Get("Retry-After") == "" {
				if v, perr := strconv.ParseFloat(ms, 64); perr == nil {
					oe.Response.Header.Set("Retry-After", strconv.FormatFloat(v/1000, 'f', -1, 64))
				}
			}
			err = upstream.Classify("embeddings", err)
			ticket.Done(oe.Response.Header, err)
			return nil, err
		}
		return nil, upstream.Classify("embeddings", err)
	}
	if res != nil {
		ticket.Done(res.Header, nil)
	}
	if u := resp.Usage.PromptTokens; u > 0 {
		e.used.Add(u)
	} else {
		e.used.Add(int64(tokens))
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

// Choose returns the embedder that kind names for an index: "openai", the OpenAI-compatible embedder of cfg,
// which needs cfg.APIKey; "local", nil, which stands for the index's own local embedder; "auto", the first when
// cfg has an API key and the second otherwise.
func Choose(kind string, cfg OpenAIConfig) (Embedder, error) {
	switch {
	case kind == "local" || kind == "auto" && cfg.APIKey == "":
		return nil, nil
	case kind == "openai" && cfg.APIKey == "":
		return nil, fmt.Errorf("embedder openai: needs an API key (OPENAI_API_KEY)")
	case kind != "openai" && kind != "auto":
		return nil, fmt.Errorf("embedder %q: want auto, local or openai", kind)
	}
	return NewOpenAI(cfg), nil
}
