package embedding

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/openai/openai-go/v3"

	"github.com/ragproxy/ragproxy/compat/openaitest"
)

// TestOpenAIAgainstSharedFake runs the embedder against the project's shared fake upstream, which checks the
// key and the model and answers in OpenAI's wire format.
func TestOpenAIAgainstSharedFake(t *testing.T) {
	srv := openaitest.NewServer(openaitest.Config{APIKey: "sk-shared", Dimensions: 48})
	defer srv.Close()
	texts := make([]string, 250)
	for i := range texts {
		texts[i] = fmt.Sprintf("text number %d", i)
	}
	e := NewOpenAI(OpenAIConfig{BaseURL: srv.URL(), APIKey: "sk-shared", Model: "text-embedding-3-small", BatchSize: 100})
	got, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	want := make([][]float32, len(texts))
	for i, s := range texts {
		want[i] = openaitest.Vector(s, 48)
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-6)); diff != "" {
		t.Errorf("vectors (-want +got):\n%s", diff)
	}
	if n := len(srv.Requests()); n != 3 || e.Dimension() != 48 {
		t.Errorf("%d requests and dimension %d, want 3 and 48", n, e.Dimension())
	}

	bad := NewOpenAI(OpenAIConfig{BaseURL: srv.URL(), APIKey: "sk-wrong", Model: "text-embedding-3-small"})
	var apiErr *openai.Error
	if _, err := bad.Embed(context.Background(), []string{"x"}); !errors.As(err, &apiErr) || apiErr.StatusCode != 401 {
		t.Errorf("wrong key: error %v, want a 401 *openai.Error", err)
	}
}

// TestOpenAIRetriesSharedFakeFaults fails the first two embeddings requests of the shared fake, a 503 and a 429
// whose Retry-After is immediate: the embedder retries each and returns the vectors of the third attempt, and a
// fault past its retries is returned to the caller.
func TestOpenAIRetriesSharedFakeFaults(t *testing.T) {
	srv := openaitest.NewServer(openaitest.Config{Dimensions: 16})
	defer srv.Close()
	srv.FailEmbeddings(openaitest.Fault{Status: 503, RetryAfter: "0"}, openaitest.Fault{Status: 429, RetryAfter: "0"})
	e := NewOpenAI(OpenAIConfig{BaseURL: srv.URL(), APIKey: "sk-test", Model: "text-embedding-3-small", MaxRetries: 2})
	got, err := e.Embed(context.Background(), []string{"tuition"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]float32{openaitest.Vector("tuition", 16)}, got, cmpopts.EquateApprox(0, 1e-6)); diff != "" {
		t.Errorf("vectors (-want +got):\n%s", diff)
	}
	var faults []int
	for _, r := range srv.Requests() {
		if r.Fault != nil {
			faults = append(faults, r.Fault.Status)
		}
	}
	if n := len(srv.Requests()); n != 3 || !cmp.Equal(faults, []int{503, 429}) {
		t.Errorf("%d requests with faults %v, want 3 with 503 and 429", n, faults)
	}

	srv.FailEmbeddings(openaitest.Fault{Status: 500, RetryAfter: "0"}, openaitest.Fault{Status: 500, RetryAfter: "0"})
	once := NewOpenAI(OpenAIConfig{BaseURL: srv.URL(), APIKey: "sk-test", Model: "text-embedding-3-small", MaxRetries: 1})
	var apiErr *openai.Error
	if _, err := once.Embed(context.Background(), []string{"x"}); !errors.As(err, &apiErr) || apiErr.StatusCode != 500 {
		t.Errorf("two 500s with one retry: error %v, want the 500 *openai.Error", err)
	}
}
