package grounding

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/server"
)

// answerRead is what a client read of one answer, streamed or not.
type answerRead struct {
	content     string
	annotations []compat.Annotation
	finish      string
	// contentDeltas counts the stream deltas with a "content" (the role delta aside); events the source events.
	contentDeltas, events int
	sources               bool // a top-level "sources" field
}

// readAnswer reads the answer of a chat completion body or SSE stream.
func readAnswer(t *testing.T, body string, stream bool) answerRead {
	t.Helper()
	var out answerRead
	if !stream {
		var c struct {
			Choices []struct {
				Message struct {
					Content     string
					Annotations []compat.Annotation
				}
				FinishReason string `json:"finish_reason"`
			}
			Sources json.RawMessage
		}
		if err := json.Unmarshal([]byte(body), &c); err != nil || len(c.Choices) != 1 {
			t.Fatalf("completion %s: %v", body, err)
		}
		out.content, out.annotations, out.finish = c.Choices[0].Message.Content, c.Choices[0].Message.Annotations, c.Choices[0].FinishReason
		out.sources = c.Sources != nil
		return out
	}
	for _, f := range strings.Split(strings.TrimSpace(body), "\n\n") {
		data, ok := strings.CutPrefix(f, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct {
			Choices []struct {
				Delta struct {
					Content     *string
					Annotations []compat.Annotation
				}
				FinishReason *string `json:"finish_reason"`
			}
			Event json.RawMessage
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("frame %q: %v", f, err)
		}
		if chunk.Event != nil {
			out.events++
		}
		for _, ch := range chunk.Choices {
			if c := ch.Delta.Content; c != nil {
				out.content += *c
				if *c != "" || len(ch.Delta.Annotations) > 0 {
					out.contentDeltas++
				}
			}
			out.annotations = append(out.annotations, ch.Delta.Annotations...)
			if ch.FinishReason != nil {
				out.finish = *ch.FinishReason
			}
		}
	}
	return out
}

const answerSchema = `{"type":"json_schema","json_schema":{"name":"reply","strict":true,"schema":{"type":"object",` +
	`"properties":{"reply":{"type":"string"},"links":{"type":"array","items":{"type":"string"}},` +
	`"confident":{"type":"boolean"},"kind":{"type":"string","enum":["fact","other"]}},` +
	`"required":["reply","links","confident","kind"],"additionalProperties":false}}}`

// TestStructuredOnline checks that the model's JSON answer to a response_format request reaches the client byte
// for byte, streamed or not, with no Sources list and no link rewritten (an invented link stays: the text is the
// program's to read), while the request still got the context and the cited page comes as an annotation over its
// URL; and that no Open WebUI source event or sources field goes out.
func TestStructuredOnline(t *testing.T) {
	r, tok := exampleIndex(t)
	g := &Grounder{Retriever: r, Tokenizer: tok, SiteName: "Lakeshore Polytechnic"}
	reply := `{"reply":"In-state tuition is $4,850 ([Tuition](` + tuitionURL + `)); pay at [the portal](https://invented.example/pay)","links":["` + tuitionURL + `"]}`
	h := newHarness(t, server.Config{Grounder: g}, replying(reply))
	for _, format := range []string{answerSchema, `{"type":"json_object"}`} {
		for _, stream := range []bool{false, true} {
			body := `{"model":"ragproxy","stream":` + map[bool]string{false: "false", true: "true"}[stream] +
				`,"response_format":` + format + `,"messages":[{"role":"user","content":"how much is in-state tuition per semester?"}]}`
			resp, out := h.post(t, "/chat/completions", body, "X-OpenWebUI-Chat-Id", "c1")
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, out)
			}
			got := readAnswer(t, out, stream)
			if got.content != reply {
				t.Errorf("stream %v, %.30s: content %q, want the model's %q", stream, format, got.content, reply)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(got.content), &v); err != nil {
				t.Errorf("content does not parse: %v", err)
			}
			if len(got.annotations) != 1 || cited(got.content, got.annotations[0]) != tuitionURL {
				t.Errorf("annotations %+v, want one over the tuition URL", got.annotations)
			}
			if got.events != 0 || got.sources {
				t.Errorf("%d source events, sources field %v: want none", got.events, got.sources)
			}
		}
	}
	for _, req := range h.Fake.Requests() {
		if sys := req.Messages[0]; sys.Role != "system" || !strings.Contains(sys.Text(), "URL: "+tuitionURL) {
			t.Errorf("upstream request without the context: %.200s", sys.Text())
		}
	}
}

// TestStructuredOffline checks the answers ragproxy writes itself for structured requests: for json_object an
// object with the answer and its sources, for json_schema an object that fills the schema (the answer in its
// string property, the sources' URLs in its links array, the enum's first value), streamed or not, for a question
// the site answers and for one it does not ("I don't know"); with tools alone, a plain message.
func TestStructuredOffline(t *testing.T) {
	r, tok := exampleIndex(t)
	g := &Grounder{Retriever: r, Tokenizer: tok, Offline: true}
	h := newHarness(t, server.Config{Grounder: g}, openaitest.Config{})
	for _, q := range []string{"how much is in-state tuition per semester?", "recipe for banana bread with walnuts"} {
		for _, stream := range []bool{false, true} {
			post := func(format string) answerRead {
				body := `{"model":"ragproxy","stream":` + map[bool]string{false: "false", true: "true"}[stream] +
					`,"response_format":` + format + `,"messages":[{"role":"user","content":"` + q + `"}]}`
				resp, out := h.post(t, "/chat/completions", body)
				if resp.StatusCode != 200 {
					t.Fatalf("status %d: %s", resp.StatusCode, out)
				}
				return readAnswer(t, out, stream)
			}
			obj := post(`{"type":"json_object"}`)
			var o struct {
				Answer  string
				Sources []struct{ Title, URL string }
			}
			if err := json.Unmarshal([]byte(obj.content), &o); err != nil || o.Answer == "" || len(o.Sources) == 0 {
				t.Errorf("%q stream %v: json_object answer %q (%v), want an answer and sources", q, stream, obj.content, err)
			} else if strings.Contains(o.Answer, "**Sources**") {
				t.Errorf("json_object answer keeps the Sources list: %q", o.Answer)
			}
			if len(obj.annotations) != len(o.Sources) || len(obj.annotations) > 0 && cited(obj.content, obj.annotations[0]) != o.Sources[0].URL {
				t.Errorf("annotations %+v, want one over each source's URL", obj.annotations)
			}
			sch := post(answerSchema)
			dec := json.NewDecoder(strings.NewReader(sch.content))
			dec.DisallowUnknownFields()
			var s struct {
				Reply     *string
				Links     []string
				Confident *bool
				Kind      *string
			}
			if err := dec.Decode(&s); err != nil || s.Reply == nil || *s.Reply == "" || s.Confident == nil || s.Kind == nil || *s.Kind != "fact" || len(s.Links) == 0 {
				t.Errorf("%q stream %v: json_schema answer %q (%v), want every property filled", q, stream, sch.content, err)
			}
		}
	}
	// Tools alone: without a model there is no tool to call, and the answer is a plain message.
	_, out := h.post(t, "/chat/completions", `{"model":"ragproxy","tools":[{"type":"function","function":{"name":"lookup","parameters":{"type":"object"}}}],"messages":[{"role":"user","content":"how much is in-state tuition per semester?"}]}`)
	if got := readAnswer(t, out, false); !strings.Contains(got.content, "**Sources**") || got.finish != "stop" {
		t.Errorf("tools offline: %q (%s), want the plain answer", got.content, got.finish)
	}
}

// TestToolCallStream checks that a stream the model ends with tool_calls gets no content delta and no
// annotations, streamed and not, while the request still had the context.
func TestToolCallStream(t *testing.T) {
	r, tok := exampleIndex(t)
	g := &Grounder{Retriever: r, Tokenizer: tok}
	h := newHarness(t, server.Config{Grounder: g}, openaitest.Config{Reply: func(*openaitest.Request) openaitest.Reply {
		return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "lookup", Arguments: `{"q":"tuition"}`}}}
	}})
	for _, stream := range []bool{true, false} {
		body := `{"model":"ragproxy","stream":` + map[bool]string{false: "false", true: "true"}[stream] +
			`,"tools":[{"type":"function","function":{"name":"lookup","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}}],` +
			`"messages":[{"role":"user","content":"how much is in-state tuition per semester?"}]}`
		_, out := h.post(t, "/chat/completions", body, "X-OpenWebUI-Chat-Id", "c1")
		got := readAnswer(t, out, stream)
		if got.finish != "tool_calls" || got.content != "" || got.contentDeltas != 0 || len(got.annotations) != 0 || got.events != 0 {
			t.Errorf("stream %v: finish %q, content %q in %d deltas, %d annotations, %d events: want a tool call alone",
				stream, got.finish, got.content, got.contentDeltas, len(got.annotations), got.events)
		}
		if !strings.Contains(out, `"lookup"`) {
			t.Errorf("stream %v: the tool call is missing: %s", stream, out)
		}
	}
	if sys := h.Fake.Requests()[0].Messages[0]; !strings.Contains(sys.Text(), "URL: "+tuitionURL) {
		t.Errorf("tool request without the context: %.200s", sys.Text())
	}
}
