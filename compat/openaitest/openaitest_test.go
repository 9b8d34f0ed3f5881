package openaitest

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

func client(s *Server) openai.Client {
	return openai.NewClient(option.WithBaseURL(s.URL()), option.WithAPIKey("sk-fake"), option.WithMaxRetries(0))
}

// TestWireFormatWithSDK checks the fake against the official Go SDK, which
// decodes OpenAI's real wire format.
func TestWireFormatWithSDK(t *testing.T) {
	s := NewServer(Config{APIKey: "sk-fake"})
	defer s.Close()
	c := client(s)
	ctx := context.Background()

	msgs := []openai.ChatCompletionMessageParamUnion{openai.UserMessage("one two")}
	comp, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	st := c.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: msgs,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}})
	acc := openai.ChatCompletionAccumulator{}
	for st.Next() {
		acc.AddChunk(st.Current())
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	got := []any{comp.Choices[0].Message.Content, acc.Choices[0].Message.Content, acc.Usage.TotalTokens == comp.Usage.TotalTokens}
	if diff := cmp.Diff([]any{"You said: one two", "You said: one two", true}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}

	// Embeddings: deterministic, float and base64 agree.
	e1, err := c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "text-embedding-3-small",
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"a", "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	e2, err := c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "text-embedding-3-small",
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("a")}, EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat})
	if err != nil {
		t.Fatal(err)
	}
	if len(e1.Data) != 2 || len(e1.Data[0].Embedding) != 64 {
		t.Fatalf("embeddings shape: %d", len(e1.Data))
	}
	if diff := cmp.Diff(e1.Data[0].Embedding, e2.Data[0].Embedding); diff != "" {
		t.Errorf("same text, different vectors (-want +got):\n%s", diff)
	}
	if cmp.Equal(e1.Data[0].Embedding, e1.Data[1].Embedding) {
		t.Error("different texts, same vector")
	}

	// Models and the fault queue.
	page, err := c.Models.List(ctx)
	if err != nil || len(page.Data) != 3 {
		t.Fatalf("models: %v %v", page, err)
	}
	s.Fail(Fault{Status: 429, RetryAfter: "3"})
	_, err = c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: msgs})
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Code != "rate_limit_exceeded" || apiErr.Response.Header.Get("Retry-After") != "3" {
		t.Errorf("fault: %v", err)
	}
	bad := openai.NewClient(option.WithBaseURL(s.URL()), option.WithAPIKey("sk-wrong"), option.WithMaxRetries(0))
	if _, err := bad.Models.List(ctx); !errors.As(err, &apiErr) || apiErr.StatusCode != 401 {
		t.Errorf("wrong key: %v", err)
	}
	if n := len(s.Requests()); n != 7 {
		t.Errorf("recorded %d requests, want 7", n)
	}
}

// TestReceived checks that Received returns once a request arrived, while the fake still holds it, and that Wait
// returns once the fake is done with it.
func TestReceived(t *testing.T) {
	s := NewServer(Config{})
	defer s.Close()
	s.Fail(Fault{Hang: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	c := client(s)
	go func() {
		_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini",
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
		errc <- err
	}()
	if err := s.Received(ctx, 1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		t.Fatalf("the hung request ended before its caller left: %v", err)
	default:
	}
	cancel()
	req, err := s.Wait(context.Background(), 0)
	if err != nil || !req.Canceled {
		t.Errorf("Wait = canceled %v, %v; want the abandoned request", req.Canceled, err)
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("the caller got %v, want context.Canceled", err)
	}
	expired, stop := context.WithCancel(context.Background())
	stop()
	if err := s.Received(expired, 2); !errors.Is(err, context.Canceled) {
		t.Errorf("Received(2) after one request = %v, want the context's error", err)
	}
}

// TestRefusalsWithSDK checks that the official SDK reads the rules' refusals
// as OpenAI's errors: status, type, param and code.
func TestRefusalsWithSDK(t *testing.T) {
	s := NewServer(Config{Models: []string{"o3-mini", "text-embedding-3-small"}, KeyLimits: map[string]Limits{"sk-fake": {Quota: 1}}})
	defer s.Close()
	c := client(s)
	ctx := context.Background()
	type got struct {
		Status            int
		Type, Param, Code string
	}
	read := func(err error) got {
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) {
			return got{}
		}
		return got{apiErr.StatusCode, apiErr.Type, apiErr.Param, apiErr.Code}
	}
	_, err := c.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "o3-mini", Temperature: openai.Float(0),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	_, err2 := c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "text-embedding-3-small",
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"a", ""}}})
	if _, err := c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "text-embedding-3-small",
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("spend the quota")}}); err != nil {
		t.Fatal(err)
	}
	_, err3 := c.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "text-embedding-3-small",
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("a")}})
	want := []got{{400, "invalid_request_error", "temperature", "unsupported_value"}, {400, "invalid_request_error", "", ""},
		{429, "insufficient_quota", "", "insufficient_quota"}}
	if diff := cmp.Diff(want, []got{read(err), read(err2), read(err3)}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
