package ingest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest/ledger"
	"github.com/ragproxy/ragproxy/ingest/summary"
)

// Price is what a model costs, in US dollars per million tokens sent (Input) and written (Output).
type Price struct {
	Input, Output float64
}

// DefaultPrices are OpenAI's list prices (platform.openai.com/docs/pricing, standard tier, as published in 2025)
// of the models ingest asks by default or is likely to be asked to; Config.Prices adds to and overrides them.
var DefaultPrices = map[string]Price{
	"gpt-4o-mini":            {0.15, 0.60},
	"gpt-4o":                 {2.50, 10.00},
	"gpt-4.1":                {2.00, 8.00},
	"gpt-4.1-mini":           {0.40, 1.60},
	"gpt-4.1-nano":           {0.10, 0.40},
	"gpt-5":                  {1.25, 10.00},
	"gpt-5-mini":             {0.25, 2.00},
	"gpt-5-nano":             {0.05, 0.40},
	"o3":                     {2.00, 8.00},
	"o4-mini":                {1.10, 4.40},
	"text-embedding-3-small": {0.02, 0},
	"text-embedding-3-large": {0.13, 0},
	"text-embedding-ada-002": {0.10, 0},
}

// ErrModelSummaries fails a run in which the model was asked for summaries and more than half of the pages it
// was asked about failed: the index is not written (the previous version stays in use) and what the model did
// write is kept in the ledger for the next run.
var ErrModelSummaries = errors.New("most model summaries failed")

// paid is what one run asks a model for and keeps: the ledger and the tokens used per stage.
type paid struct {
	ledger *ledger.Ledger // nil when the run uses no model
	prices map[string]Price

	mu sync.Mutex
	// summaryModel, summaryIn and summaryOut are the summary stage's model and tokens.
	summaryModel          string
	summaryIn, summaryOut int
	// storedSummaries and storedVectors count what this run wrote to the ledger.
	storedSummaries, storedVectors int
	// embedMeter counts the embedder's tokens, from embedBefore at the start of the stage, for embedModel.
	embedMeter  embedding.Metered
	embedBefore int64
	embedModel  string
}

// openPaid opens the index directory's ledger when the run asks a model for anything.
func (r *run) openPaid() error {
	r.paid = &paid{prices: map[string]Price{}}
	for m, p := range DefaultPrices {
		r.paid.prices[m] = p
	}
	for m, p := range r.cfg.Prices {
		r.paid.prices[m] = p
	}
	if r.cfg.Summarizer == nil && r.cfg.Embedder == nil {
		return nil
	}
	l, err := ledger.Open(filepath.Join(r.cfg.IndexDir, ledger.FileName))
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	if n := l.Dropped(); n > 0 {
		r.cfg.Logger.Warn("ledger: cut a torn tail (a run that stopped mid-write)", "bytes", n)
	}
	r.paid.ledger = l
	return nil
}

func (p *paid) close() {
	if p != nil && p.ledger != nil {
		p.ledger.Close()
	}
}

// summaryKey is the ledger key of a model summary: the model, the prompt and input bound, and the page.
func summaryKey(l *summary.LLM, model string, d summary.Doc) ledger.Key {
	return ledger.KeyOf("summary", model, l.Version(), d.Title, d.Markdown)
}

func (p *paid) summary(k ledger.Key) (string, bool) {
	if p.ledger == nil {
		return "", false
	}
	b, ok, err := p.ledger.Get(k)
	if err != nil || !ok {
		return "", false
	}
	return string(b), true
}

func (p *paid) putSummary(k ledger.Key, s string) error {
	if p.ledger == nil {
		return nil
	}
	if err := p.ledger.Append(ledger.Record{Key: k, Value: []byte(s)}); err != nil {
		return err
	}
	p.mu.Lock()
	p.storedSummaries++
	p.mu.Unlock()
	return nil
}

// vectorKey is the ledger key of a vector: the embedder (its model and dimensions) and the text.
func vectorKey(e embedding.Embedder, text string) ledger.Key {
	return ledger.KeyOf("vector", e.Name(), text)
}

// vector returns the kept vector of text, of dim values when dim is known (else any).
func (p *paid) vector(k ledger.Key, dim int) ([]float32, bool) {
	if p.ledger == nil {
		return nil, false
	}
	b, ok, err := p.ledger.Get(k)
	if err != nil || !ok || len(b)%4 != 0 || len(b) == 0 || dim > 0 && len(b) != 4*dim {
		return nil, false
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, true
}

// putVectors keeps one request's vectors, fsynced together.
func (p *paid) putVectors(keys []ledger.Key, vecs [][]float32) error {
	if p.ledger == nil {
		return nil
	}
	recs := make([]ledger.Record, len(keys))
	for j, v := range vecs {
		b := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		recs[j] = ledger.Record{Key: keys[j], Value: b}
	}
	if err := p.ledger.Append(recs...); err != nil {
		return err
	}
	p.mu.Lock()
	p.storedVectors += len(vecs)
	p.mu.Unlock()
	return nil
}

func (p *paid) addSummaryUsage(model string, in, out int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.summaryModel = model
	p.summaryIn += in
	p.summaryOut += out
}

// meter starts counting the embedder's tokens, when it counts them.
func (p *paid) meter(e embedding.Embedder) {
	if m, ok := e.(embedding.Metered); ok {
		p.embedMeter, p.embedBefore = m, m.TokensUsed()
		p.embedModel = e.Name()
		if o, ok := e.(interface{ Model() string }); ok {
			p.embedModel = o.Model()
		}
	}
}

// usage is the tokens used this run per stage, priced.
func (p *paid) usage() []index.Usage {
	var out []index.Usage
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.summaryModel != "" {
		out = append(out, p.priced(index.Usage{Stage: "summaries", Model: p.summaryModel,
			PromptTokens: p.summaryIn, CompletionTokens: p.summaryOut}))
	}
	if p.embedMeter != nil {
		out = append(out, p.priced(index.Usage{Stage: "embeddings", Model: p.embedModel,
			PromptTokens: int(p.embedMeter.TokensUsed() - p.embedBefore)}))
	}
	return out
}

func (p *paid) priced(u index.Usage) index.Usage {
	if pr, ok := p.prices[u.Model]; ok {
		u.CostUSD = (float64(u.PromptTokens)*pr.Input + float64(u.CompletionTokens)*pr.Output) / 1e6
		u.Priced = true
	}
	return u
}

// explain adds to a failed run's error what stopped it, when the upstream refused the key, and what the ledger
// kept, so that the operator knows that a re-run pays only for the rest.
func (r *run) explain(err error) error {
	if err == nil || r.paid == nil || r.paid.ledger == nil {
		return err
	}
	cause := ""
	var ae *compat.APIError
	if errors.As(err, &ae) {
		switch {
		case ae.Code == "insufficient_quota" || ae.Type == "insufficient_quota":
			cause = "the API key's quota is spent (insufficient_quota): add credit or use another key; "
		case ae.Status == http.StatusUnauthorized:
			cause = "the API key was refused (401): check OPENAI_API_KEY; "
		case ae.Status == http.StatusForbidden:
			cause = "the API key may not use this model or region (403); "
		}
	}
	p := r.paid
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Errorf("%w\n%sthe ledger %s keeps %d results paid for (%d summaries and %d vectors written this run): a re-run pays only for what is missing",
		err, cause, filepath.Join(r.cfg.IndexDir, ledger.FileName), p.ledger.Len(), p.storedSummaries, p.storedVectors)
}

// ParsePrice reads a model's price written MODEL=INPUT[,OUTPUT], in US dollars per million tokens (ingest's
// --price flag).
func ParsePrice(s string) (model string, p Price, err error) {
	model, v, ok := strings.Cut(s, "=")
	in, out, _ := strings.Cut(v, ",")
	p.Input, err = strconv.ParseFloat(strings.TrimSpace(in), 64)
	if err == nil && strings.TrimSpace(out) != "" {
		p.Output, err = strconv.ParseFloat(strings.TrimSpace(out), 64)
	}
	if !ok || model == "" || err != nil || p.Input < 0 || p.Output < 0 {
		return "", Price{}, fmt.Errorf("price %q: want MODEL=INPUT,OUTPUT in dollars per million tokens", s)
	}
	return model, p, nil
}
