package compat

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseChunk(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want Chunk
	}{
		{name: "role", raw: `{"id":"c1","model":"m","created":5,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
			want: Chunk{ID: "c1", Model: "m", Created: 5, Choices: []ChunkChoice{{Role: "assistant", HasContent: true}}}},
		{name: "content", raw: `{"id":"c1","choices":[{"delta":{"content":"hi"}}]}`,
			want: Chunk{ID: "c1", Choices: []ChunkChoice{{Content: "hi", HasContent: true}}}},
		{name: "null content", raw: `{"id":"c1","choices":[{"delta":{"content":null,"tool_calls":[]}}]}`,
			want: Chunk{ID: "c1", Choices: []ChunkChoice{{Special: true}}}},
		{name: "refusal", raw: `{"id":"c1","choices":[{"delta":{"refusal":"no"}}]}`,
			want: Chunk{ID: "c1", Choices: []ChunkChoice{{Special: true}}}},
		{name: "null refusal", raw: `{"id":"c1","choices":[{"delta":{"content":"a","refusal":null}}]}`,
			want: Chunk{ID: "c1", Choices: []ChunkChoice{{Content: "a", HasContent: true}}}},
		{name: "finish for tool calls", raw: `{"id":"c1","choices":[{"delta":{},"finish_reason":"tool_calls"}]}`,
			want: Chunk{ID: "c1", Choices: []ChunkChoice{{FinishReason: "tool_calls", Special: true}}}},
		{name: "finish", raw: `{"id":"c1","choices":[{"delta":{},"finish_reason":"stop"}]}`,
			want: Chunk{ID: "c1", Choices: []ChunkChoice{{FinishReason: "stop"}}}},
		{name: "second of n answers", raw: `{"id":"c1","choices":[{"index":1,"delta":{"content":"b"},"finish_reason":null}]}`,
			want: Chunk{ID: "c1", Choices: []ChunkChoice{{Index: 1, Content: "b", HasContent: true}}}},
		{name: "two choices in one chunk", raw: `{"id":"c1","choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{},"finish_reason":"length"}]}`,
			want: Chunk{ID: "c1", Choices: []ChunkChoice{{Content: "a", HasContent: true}, {Index: 1, FinishReason: "length"}}}},
		{name: "usage, empty choices", raw: `{"id":"c1","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
			want: Chunk{ID: "c1", Usage: &Usage{1, 2, 3}}},
		{name: "no choices key", raw: `{"id":"c1"}`, want: Chunk{ID: "c1"}},
		{name: "null usage", raw: `{"id":"c1","choices":[],"usage":null}`, want: Chunk{ID: "c1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseChunk([]byte(tt.raw))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := ParseChunk([]byte(`{"id":`)); err == nil {
		t.Error("invalid JSON accepted")
	}
	// A Chunk keeps nothing of raw's memory: the stream reuses it for the next event.
	raw := []byte(`{"id":"c1","model":"m","choices":[{"delta":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`)
	got, err := ParseChunk(raw)
	if err != nil {
		t.Fatal(err)
	}
	for i := range raw {
		raw[i] = 'x'
	}
	want := Chunk{ID: "c1", Model: "m", Choices: []ChunkChoice{{Role: "assistant", Content: "hi", HasContent: true, FinishReason: "stop"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after raw changed (-want +got):\n%s", diff)
	}
}

// A stream's chunks read into one Chunk come out as each would alone: nothing of the one before stays.
func TestReadChunkFollowsAStream(t *testing.T) {
	stream := []string{
		`{"id":"c1","model":"m","created":5,"choices":[{"index":0,"delta":{"role":"assistant","content":"a"}},{"index":1,"delta":{"content":"b"}}]}`,
		`{"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"c"}}],"usage":null}`,
		`{"id":"c2","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
		`{"choices":[{"index":1,"delta":{},"finish_reason":"stop"}]}`,
	}
	var c Chunk
	for i, raw := range stream {
		want, err := ParseChunk([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if err := ReadChunk([]byte(raw), &c); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, c); diff != "" {
			t.Errorf("chunk %d (-alone +in the stream):\n%s", i, diff)
		}
	}
	if err := ReadChunk([]byte(`[1]`), &c); err == nil {
		t.Error("a chunk that is not an object accepted")
	}
}

func TestParseCompletion(t *testing.T) {
	raw := []byte(`{"id":"c","choices":[{"index":0,"message":{"role":"assistant","content":"a"}},` +
		`{"index":1,"message":{"role":"assistant","content":null,"tool_calls":[]}}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`)
	got, err := ParseCompletion(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := CompletionInfo{ID: "c", Choices: []CompletionChoice{{Content: "a", HasContent: true}, {}}, Usage: &Usage{1, 2, 3}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	edited, err := SetMessageContent(raw, 1, "b")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := ParseCompletion(edited); got.Choices[1] != (CompletionChoice{Content: "b", HasContent: true}) || got.Choices[0].Content != "a" {
		t.Errorf("SetMessageContent(1) gave %+v", got.Choices)
	}
	if _, err := ParseCompletion([]byte(`{"choices":`)); err == nil {
		t.Error("invalid JSON accepted")
	}
}

func TestAPIErrorJSON(t *testing.T) {
	tests := []struct {
		name string
		err  *APIError
		want string
	}{
		{name: "nulls", err: ServerError(nil),
			want: `{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}`},
		{name: "param and code", err: InvalidRequest("messages", "invalid_type", "bad"),
			want: `{"error":{"message":"bad","type":"invalid_request_error","param":"messages","code":"invalid_type"}}`},
		{name: "upstream body relayed", err: &APIError{Status: 400, Body: []byte(`{"error":{"message":"x","type":"t","param":null,"code":"c","extra":1}}`)},
			want: `{"error":{"message":"x","type":"t","param":null,"code":"c","extra":1}}`},
		{name: "upstream body not openai", err: &APIError{Status: 500, Type: "server_error", Message: "m", Body: []byte(`<html>`)},
			want: `{"error":{"message":"m","type":"server_error","param":null,"code":null}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, string(tt.err.JSON())); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestChunkBuilder(t *testing.T) {
	b := ChunkBuilder{ID: "chatcmpl-1", Model: "ragproxy", Created: 7}
	got := []string{string(b.Role()), string(b.Content("a > b & <c>")), string(b.Finish("stop")), string(b.Usage(Usage{1, 2, 3})),
		string(b.ForChoice(2).Content("c")), string(b.CompletionN("a", 2, Usage{1, 2, 3}, nil)),
		string(b.Content("[A](u)", Citation("u", "A", 0, 6))), string(b.Completion("[A](u)", Usage{1, 2, 3}, []Annotation{Citation("u", "A", 0, 6)}))}
	want := []string{
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"ragproxy","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"ragproxy","choices":[{"index":0,"delta":{"content":"a > b & <c>"},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"ragproxy","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"ragproxy","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"ragproxy","choices":[{"index":2,"delta":{"content":"c"},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion","created":7,"model":"ragproxy","choices":[{"index":0,"message":{"role":"assistant","content":"a","refusal":null},"logprobs":null,"finish_reason":"stop"},{"index":1,"message":{"role":"assistant","content":"a","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
		`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":7,"model":"ragproxy","choices":[{"index":0,"delta":{"content":"[A](u)","annotations":[{"type":"url_citation","url_citation":{"end_index":6,"start_index":0,"title":"A","url":"u"}}]},"logprobs":null,"finish_reason":null}]}`,
		`{"id":"chatcmpl-1","object":"chat.completion","created":7,"model":"ragproxy","choices":[{"index":0,"message":{"role":"assistant","content":"[A](u)","refusal":null,"annotations":[{"type":"url_citation","url_citation":{"end_index":6,"start_index":0,"title":"A","url":"u"}}]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"aaa bbb ", "ccc"}, SplitDeltas("aaa bbb ccc", 4)); diff != "" {
		t.Errorf("SplitDeltas (-want +got):\n%s", diff)
	}
}
