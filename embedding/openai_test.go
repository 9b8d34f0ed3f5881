package embedding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/compat"
)

// fakeEmbeddings speaks the /v1/embeddings wire format (OpenAI API reference, "Create embeddings"). Its vectors
// are deterministic and deliberately not unit length: element j of a text's vector is len(text)+j. It answers
// items in reverse order, so clients must place rows by "index". faults[n], when set, is what the n-th request
// gets instead of an answer: an HTTP status, or -1 to drop the connection.
type fakeEmbeddings struct {
	t      *testing.T
	dim    int
	faults map[int]int

	mu       sync.Mutex
	requests []embeddingRequest
}

type embeddingRequest struct {
	Input          []string `json:"input"`
	Model          string   `json:"model"`
	Dimensions     int      `json:"dimensions,omitempty"`
	EncodingFormat string   `json:"encoding_format,omitempty"`
	Auth           string   `json:"-"`
}

func (f *fakeEmbeddings) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
		http.Error(w, `{"error":{"message":"not found","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req embeddingRequest
	if err := json.Unmarshal(body, &req); err != nil {
		f.t.Errorf("fake: bad request body %s: %v", body, err)
	}
	req.Auth = r.Header.Get("Authorization")
	f.mu.Lock()
	n := len(f.requests)
	f.requests = append(f.requests, req)
	fault := f.faults[n]
	f.mu.Unlock()
	switch {
	case fault == -1:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	case fault != 0:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After-Ms", "1")
		w.WriteHeader(fault)
		fmt.Fprintf(w, `{"error":{"message":"fault %d","type":"server_error","param":null,"code":null}}`, fault)
		return
	}
	dim := f.dim
	if req.Dimensions > 0 {
		dim = req.Dimensions
	}
	type item struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float64 `json:"embedding"`
	}
	var data []item
	for i := len(req.Input) - 1; i >= 0; i-- {
		v := make([]float64, dim)
		for j := range v {
			v[j] = float64(len(req.Input[i]) + j)
		}
		data = append(data, item{"embedding", i, v})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"object": "list", "data": data, "model": req.Model,
		"usage": map[string]int{"prompt_tokens": len(req.Input), "total_tokens": len(req.Input)},
	})
}

func (f *fakeEmbeddings) batches() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []int
	for _, r := range f.requests {
		out = append(out, len(r.Input))
	}
	return out
}

// expected is the unit vector the fake's answer for text normalises to.
func expected(text string, dim int) []float32 {
	v := make([]float32, dim)
	for j := range v {
		v[j] = float32(len(text) + j)
	}
	normalize(v)
	return v
}

func newFake(t *testing.T, dim int, faults map[int]int) (*fakeEmbeddings, string) {
	f := &fakeEmbeddings{t: t, dim: dim, faults: faults}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL + "/v1"
}

func TestOpenAIEmbed(t *testing.T) {
	texts := make([]string, 300)
	for i := range texts {
		texts[i] = strings.Repeat("x", i%17+1)
	}
	tests := []struct {
		name        string
		cfg         OpenAIConfig
		wantDim     int
		wantBatches []int
		wantName    string
	}{
		{"defaults", OpenAIConfig{APIKey: "sk-test"}, 12, []int{300}, "text-embedding-3-large"},
		{"batch size and dimensions", OpenAIConfig{APIKey: "sk-test", Model: "m", Dimensions: 5, BatchSize: 100, Concurrency: 1}, 5, []int{100, 100, 100}, "m@5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, url := newFake(t, 12, nil)
			tt.cfg.BaseURL = url
			e := NewOpenAI(tt.cfg)
			got, err := e.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			want := make([][]float32, len(texts))
			for i, s := range texts {
				want[i] = expected(s, tt.wantDim)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("vectors (-want +got):\n%s", diff)
			}
			batches := f.batches()
			if tt.cfg.Concurrency != 1 { // concurrent batches may arrive in any order
				slicesSortDesc(batches)
			}
			if diff := cmp.Diff(tt.wantBatches, batches); diff != "" {
				t.Errorf("batch sizes (-want +got):\n%s", diff)
			}
			if e.Dimension() != tt.wantDim || e.Name() != tt.wantName {
				t.Errorf("Dimension(), Name() = %d, %q; want %d, %q", e.Dimension(), e.Name(), tt.wantDim, tt.wantName)
			}
			r := f.requests[0]
			if r.Auth != "Bearer sk-test" || r.Model != e.cfg.Model || r.Dimensions != tt.cfg.Dimensions || r.EncodingFormat != "float" {
				t.Errorf("request = auth %q model %q dimensions %d format %q", r.Auth, r.Model, r.Dimensions, r.EncodingFormat)
			}
		})
	}
}

func slicesSortDesc(s []int) {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] > s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
}

func TestOpenAIBlankTexts(t *testing.T) {
	f, url := newFake(t, 3, nil)
	got, err := NewOpenAI(OpenAIConfig{BaseURL: url}).Embed(context.Background(), []string{"", "ab", "  "})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float32{{0, 0, 0}, expected("ab", 3), {0, 0, 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1}, f.batches()); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
}

func TestOpenAIRetries(t *testing.T) {
	tests := []struct {
		name     string
		faults   map[int]int
		retries  int
		wantErr  int // HTTP status of the final error, 0 for success
		requests int
	}{
		{"429 then success", map[int]int{0: 429, 1: 429}, 0, 0, 3},
		{"503 then success", map[int]int{0: 503}, 0, 0, 2},
		{"dropped connection then success", map[int]int{0: -1}, 0, 0, 2},
		{"400 is not retried", map[int]int{0: 400}, 0, 400, 1},
		{"retries exhausted", map[int]int{0: 500, 1: 500, 2: 500}, 2, 500, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, url := newFake(t, 4, tt.faults)
			got, err := NewOpenAI(OpenAIConfig{BaseURL: url, MaxRetries: tt.retries}).Embed(context.Background(), []string{"hello"})
			if tt.wantErr == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff([][]float32{expected("hello", 4)}, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			} else {
				var apiErr *compat.APIError
				if !errors.As(err, &apiErr) || apiErr.Status != tt.wantErr {
					t.Fatalf("error = %v, want a *compat.APIError with status %d", err, tt.wantErr)
				}
			}
			if n := len(f.batches()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
		})
	}
}

func TestOpenAIBadResponses(t *testing.T) {
	tests := map[string]string{
		"too few":       `{"object":"list","data":[],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}`,
		"bad index":     `{"object":"list","data":[{"object":"embedding","index":3,"embedding":[1,2]},{"object":"embedding","index":0,"embedding":[1,2]}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}`,
		"repeated":      `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1,2]},{"object":"embedding","index":0,"embedding":[1,2]}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}`,
		"ragged":        `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[1,2]},{"object":"embedding","index":1,"embedding":[1,2,3]}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}`,
		"empty vector":  `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[]},{"object":"embedding","index":1,"embedding":[]}],"model":"m","usage":{"prompt_tokens":1,"total_tokens":1}}`,
		"not json list": `{"object":"list","data":"nope"}`,
	}
	for name, body := range tests {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, body)
			}))
			defer srv.Close()
			e := NewOpenAI(OpenAIConfig{BaseURL: srv.URL + "/v1", Concurrency: 1})
			if _, err := e.Embed(context.Background(), []string{"a", "b"}); err == nil {
				t.Errorf("Embed accepted %s", body)
			}
		})
	}
}

func TestOpenAIRedacted(t *testing.T) {
	c := OpenAIConfig{APIKey: "sk-secret", Model: "m"}
	if got := fmt.Sprintf("%+v", c.Redacted()); strings.Contains(got, "sk-secret") {
		t.Errorf("Redacted() leaks the key: %s", got)
	}
	if c.APIKey != "sk-secret" {
		t.Error("Redacted() modified the original")
	}
}

func TestOpenAIUnitRows(t *testing.T) {
	_, url := newFake(t, 7, nil)
	rows, err := NewOpenAI(OpenAIConfig{BaseURL: url}).Embed(context.Background(), []string{"a", "bcd"})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		if n := dot(r, r); math.Abs(n-1) > 1e-6 {
			t.Errorf("row %d squared norm %v", i, n)
		}
	}
}

// A request that fails for good (a spent quota) stops the requests not yet sent, not one in flight: the upstream
// bills a request it has begun to answer, so its vectors are put (an ingest keeps them in its ledger) rather
// than paid for again by the next run.
func TestOpenAIKeepsRequestsInFlightWhenAnotherFails(t *testing.T) {
	f, _ := newFake(t, 4, nil)
	failed := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		if strings.Contains(string(body), "fail") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`)
			close(failed)
			return
		}
		<-failed
		// A client that gives up on the requests in flight once one failed closes this one now.
		select {
		case <-r.Context().Done():
			return
		case <-time.After(300 * time.Millisecond):
		}
		f.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e := NewOpenAI(OpenAIConfig{APIKey: "sk-test", BaseURL: srv.URL + "/v1", BatchSize: 1, Concurrency: 2, MaxRetries: -1})
	var put []int
	err := e.EmbedEach(context.Background(), []string{"slow text", "fail text"}, func(pos []int, vecs [][]float32) error {
		put = append(put, pos...)
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "insufficient_quota") {
		t.Fatalf("EmbedEach = %v, want the spent quota", err)
	}
	if !slices.Equal(put, []int{0}) {
		t.Errorf("vectors put for texts %v, want the one whose request was in flight (0)", put)
	}
}
