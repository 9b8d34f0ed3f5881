package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptrace"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/ragproxy/ragproxy/compat/openaitest"
)

func sdkClient(h *harness, key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(h.URL), option.WithAPIKey(key), option.WithMaxRetries(0))
}

func TestOpenAIGoClient(t *testing.T) {
	h := newHarness(t, harnessOpts{cfg: Config{APIKeys: []string{"sk-test"}}})
	client := sdkClient(h, "sk-test")
	ctx := waitCtx(t)
	params := openai.ChatCompletionNewParams{
		Model:    "ragproxy",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("hello proxy")},
	}

	t.Run("non-stream", func(t *testing.T) {
		got, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff("You said: hello proxy", got.Choices[0].Message.Content); diff != "" {
			t.Errorf("content (-want +got):\n%s", diff)
		}
		if got.Usage.TotalTokens == 0 {
			t.Error("usage missing")
		}
	})

	t.Run("stream", func(t *testing.T) {
		p := params
		p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		stream := client.Chat.Completions.NewStreaming(ctx, p)
		acc := openai.ChatCompletionAccumulator{}
		ids := map[string]bool{}
		for stream.Next() {
			chunk := stream.Current()
			ids[chunk.ID] = true
			acc.AddChunk(chunk)
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff("You said: hello proxy", acc.Choices[0].Message.Content); diff != "" {
			t.Errorf("content (-want +got):\n%s", diff)
		}
		if len(ids) != 1 {
			t.Errorf("chunk ids = %v, want one id", ids)
		}
		if acc.Usage.CompletionTokens != 4 {
			t.Errorf("completion tokens = %d, want 4", acc.Usage.CompletionTokens)
		}
	})

	t.Run("stream n answers", func(t *testing.T) {
		p := params
		p.N = openai.Int(2)
		stream := client.Chat.Completions.NewStreaming(ctx, p)
		acc := openai.ChatCompletionAccumulator{}
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range acc.Choices {
			got = append(got, c.Message.Content)
		}
		if diff := cmp.Diff([]string{"You said: hello proxy", "You said: hello proxy"}, got); diff != "" {
			t.Errorf("answers (-want +got):\n%s", diff)
		}
	})

	t.Run("models", func(t *testing.T) {
		page, err := client.Models.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) != 1 || page.Data[0].ID != "ragproxy" {
			t.Errorf("models = %+v", page.Data)
		}
	})

	errTests := []struct {
		name   string
		call   func() error
		status int
		code   string
		param  string
	}{
		{name: "wrong key", status: http.StatusUnauthorized, code: "invalid_api_key", call: func() error {
			c := sdkClient(h, "sk-wrong")
			_, err := c.Chat.Completions.New(ctx, params)
			return err
		}},
		{name: "bad messages", status: http.StatusBadRequest, code: "empty_array", param: "messages", call: func() error {
			p := params
			p.Messages = []openai.ChatCompletionMessageParamUnion{}
			_, err := client.Chat.Completions.New(ctx, p)
			return err
		}},
		{name: "n out of range", status: http.StatusBadRequest, code: "integer_above_max_value", param: "n", call: func() error {
			p := params
			p.N = openai.Int(129)
			_, err := client.Chat.Completions.New(ctx, p)
			return err
		}},
		{name: "unknown model", status: http.StatusNotFound, code: "model_not_found", param: "model", call: func() error {
			_, err := client.Models.Get(ctx, "gpt-unknown")
			return err
		}},
		{name: "upstream 404 relayed in stream", status: http.StatusNotFound, code: "model_not_found", call: func() error {
			p := params
			p.Model = "gpt-unknown"
			s := client.Chat.Completions.NewStreaming(ctx, p)
			for s.Next() {
			}
			return s.Err()
		}},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var apiErr *openai.Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v is not *openai.Error", err)
			}
			got := []any{apiErr.StatusCode, apiErr.Code, apiErr.Param, apiErr.Message != ""}
			want := []any{tt.status, tt.code, tt.param, true}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVendorFieldsForwarded(t *testing.T) {
	h := newHarness(t, harnessOpts{fake: openaitest.Config{APIKey: "sk-upstream"}})
	body := `{"model":"ragproxy","messages":[{"role":"user","content":"hi","x_vendor":1}],"max_tokens":7,"max_completion_tokens":8,"top_k":40,"metadata":{"a":"b"},"stream":true,"stream_options":{"x":true}}`
	resp, _ := h.post(t, "/chat/completions", body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	got, err := h.Fake.Wait(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"max_completion_tokens":8,"max_tokens":7,"messages":[{"role":"user","content":"hi","x_vendor":1}],"metadata":{"a":"b"},"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true,"x":true},"top_k":40}`
	if diff := cmp.Diff(want, string(got.Body)); diff != "" {
		t.Errorf("upstream body (-want +got):\n%s", diff)
	}
	if a := got.Header.Get("Authorization"); a != "Bearer sk-upstream" {
		t.Errorf("upstream Authorization = %q, want the upstream key", a)
	}
}

// TestSDKStreamsKeepTheConnection checks that streams read with the openai-go SDK, which stops at data: [DONE]
// and closes the body there, leave the connection to the next request: Go's HTTP client keeps it only when the
// chunked body's end came with [DONE], so the proxy sends both in one write.
func TestSDKStreamsKeepTheConnection(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	client := sdkClient(h, "")
	params := openai.ChatCompletionNewParams{Model: "ragproxy", Messages: []openai.ChatCompletionMessageParamUnion{
		openai.UserMessage("keep the line")}}
	const streams = 30
	reused := 0
	for i := range streams {
		ctx := httptrace.WithClientTrace(waitCtx(t), &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
			if info.Reused {
				reused++
			}
		}})
		stream := client.Chat.Completions.NewStreaming(ctx, params)
		var content string
		for stream.Next() {
			if ch := stream.Current().Choices; len(ch) > 0 {
				content += ch[0].Delta.Content
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		stream.Close()
		if content != "You said: keep the line" {
			t.Fatalf("stream %d: content = %q", i, content)
		}
	}
	if reused != streams-1 {
		t.Errorf("%d of %d streams after the first reused the connection, want all", reused, streams-1)
	}
}
