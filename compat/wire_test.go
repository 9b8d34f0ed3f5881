package compat

import (
	"encoding/json"
	"regexp"
	"testing"
	"unicode/utf8"

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

// loneSurrogate matches an escaped UTF-16 surrogate, half of a pair or alone.
var loneSurrogate = regexp.MustCompile(`\\u[dD][89a-fA-F]`)

// ReadChunk reads any bytes without panicking, takes every JSON object, and reads a chunk's fields as
// encoding/json decodes them.
func FuzzReadChunk(f *testing.F) {
	f.Add([]byte(`{"id":"c1","model":"m","created":5,"choices":[{"index":0,"delta":{"role":"assistant","content":"hi"},"finish_reason":null}]}`))
	f.Add([]byte(`{"id":"c1","choices":[{"index":1,"delta":{"content":null,"tool_calls":[]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}`))
	f.Add([]byte(`{"id":"\u00e9\ud83d\ude00","choices":[{"delta":{"content":"a\"b\\n"}}]}`))
	f.Add([]byte(`[1]`))
	f.Add([]byte(`{"id":`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var c Chunk
		err := ReadChunk(raw, &c)
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil || obj == nil {
			return // no JSON object (null decodes into a nil map): ReadChunk may refuse it
		}
		if err != nil {
			t.Fatalf("ReadChunk refused a JSON object: %v (%q)", err, raw)
		}
		if !utf8.Valid(raw) || loneSurrogate.Match(raw) {
			// Both readers take these, differently: encoding/json writes U+FFFD for invalid UTF-8 and for an
			// escaped half of a surrogate pair, fastjson keeps the bytes and the escape as written. Neither
			// reaches a client (the relay passes the chunk's bytes on), and OpenAI sends neither.
			return
		}
		// The reference reads keys as they are written (encoding/json's structs would also take "ChoiCes").
		str := func(m map[string]json.RawMessage, key string) (string, bool) {
			var v *string
			if raw, ok := m[key]; ok && json.Unmarshal(raw, &v) != nil {
				return "", false
			}
			if v == nil {
				return "", true
			}
			return *v, true
		}
		id, ok1 := str(obj, "id")
		model, ok2 := str(obj, "model")
		var choices []map[string]json.RawMessage
		if raw, ok := obj["choices"]; ok && json.Unmarshal(raw, &choices) != nil || !ok1 || !ok2 {
			return // a field of another type: no reading to compare with
		}
		if c.ID != id || c.Model != model || len(c.Choices) != len(choices) {
			t.Fatalf("read id %q model %q %d choices, encoding/json %q %q %d (%q)", c.ID, c.Model, len(c.Choices), id, model, len(choices), raw)
		}
		for i, ch := range choices {
			var index int
			var delta map[string]json.RawMessage
			if raw, ok := ch["index"]; ok && json.Unmarshal(raw, &index) != nil {
				return
			}
			if raw, ok := ch["delta"]; ok && json.Unmarshal(raw, &delta) != nil {
				return
			}
			role, ok1 := str(delta, "role")
			content, ok2 := str(delta, "content")
			finish, ok3 := str(ch, "finish_reason")
			if !ok1 || !ok2 || !ok3 {
				return
			}
			got := c.Choices[i]
			if got.Index != index || got.Role != role || got.Content != content || got.FinishReason != finish {
				t.Fatalf("choice %d read %+v, encoding/json index %d role %q content %q finish %q (%q)", i, got, index, role, content, finish, raw)
			}
		}
	})
}
