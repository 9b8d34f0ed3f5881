package openaitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// wire types in OpenAI's field order.
type chunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint string        `json:"system_fingerprint"`
	Choices           []chunkChoice `json:"choices"`
	Usage             *usage        `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int       `json:"index"`
	Delta        delta     `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

type delta struct {
	Role      string          `json:"role,omitempty"`
	Content   *string         `json:"content,omitempty"`
	Refusal   *string         `json:"refusal,omitempty"`
	ToolCalls []toolCallDelta `json:"tool_calls,omitempty"`
}

type toolCallDelta struct {
	Index    int      `json:"index"`
	ID       string   `json:"id,omitempty"`
	Type     string   `json:"type,omitempty"`
	Function function `json:"function"`
}

type function struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type completion struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	Created           int64              `json:"created"`
	Model             string             `json:"model"`
	Choices           []completionChoice `json:"choices"`
	Usage             *usage             `json:"usage,omitempty"`
	SystemFingerprint string             `json:"system_fingerprint"`
}

type completionChoice struct {
	Index        int       `json:"index"`
	Message      message   `json:"message"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason string    `json:"finish_reason"`
}

type message struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	Refusal   *string        `json:"refusal"`
	ToolCalls []fullToolCall `json:"tool_calls,omitempty"`
}

type fullToolCall struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Function function `json:"function"`
}

// Words splits text into stream deltas the way the fake streams them: each
// word with the space before it.
func Words(text string) []string {
	var out []string
	for i, w := range strings.Split(text, " ") {
		if i > 0 {
			w = " " + w
		}
		out = append(out, w)
	}
	return out
}

// promptTokens is the fake's prompt size, words plus 3 per message, which
// usage reports and the limits and Stats bill. It is not a real tokenizer's
// count: the golden transcripts of the packages that use the fake hold these
// figures.
func promptTokens(r *Request) int {
	n := 0
	for _, m := range r.Messages {
		n += len(strings.Fields(m.Text())) + 3
	}
	return n
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	rec := r.Context().Value(reqKey{}).(*Request)
	ctx := r.Context()
	f := s.nextFault()
	s.mu.Lock()
	rec.Fault = f
	n := s.count
	s.mu.Unlock()
	if f != nil {
		if !sleepCtx(ctx, f.Delay) {
			return
		}
		switch {
		case f.Hang:
			<-ctx.Done()
			return
		case f.Drop:
			panic(http.ErrAbortHandler) // closes the connection without a response
		case f.Status != 0:
			if f.RetryAfter != "" {
				w.Header().Set("Retry-After", f.RetryAfter)
			}
			writeError(w, f.Status, f.Body, rec.Model, f.ContentType)
			return
		}
	}
	if rec.Model == "" || rec.Messages == nil {
		writeError(w, http.StatusBadRequest, "", "")
		return
	}
	if !s.models[rec.Model] {
		writeError(w, http.StatusNotFound, "", rec.Model)
		return
	}
	params, e := chatParams(rec.raw)
	if e == nil && IsReasoningModel(rec.Model) {
		e = params.checkReasoning()
	}
	if e != nil {
		s.refuse(w, e)
		return
	}
	prompt := promptTokens(rec)
	if e := s.admit(w, r, rec.Model, prompt+params.maxCompletion); e != nil {
		s.refuse(w, e)
		return
	}
	if !sleepCtx(ctx, s.cfg.FirstByteDelay) {
		return
	}
	reply := s.cfg.Reply(rec)
	id := fmt.Sprintf("chatcmpl-fake%d", n)
	key := bearer(r)
	if !rec.Stream {
		if !sleepCtx(ctx, reply.FirstTokenDelay) {
			return
		}
		s.complete(w, rec, key, id, reply, prompt)
		return
	}
	s.stream(w, r, rec, key, id, reply, prompt, f)
}

// IsReasoningModel reports whether OpenAI's API treats model as a reasoning
// model: the o-series (o1, o3, o3-mini, o4-mini, ...) and gpt-5 and its
// variants, which take neither temperature (but its default) nor max_tokens
// (OpenAI's reasoning guide: "use max_completion_tokens").
func IsReasoningModel(model string) bool {
	if strings.HasPrefix(model, "gpt-5") {
		return true
	}
	return len(model) >= 2 && model[0] == 'o' && '1' <= model[1] && model[1] <= '9'
}

// chatRequestParams are the chat parameters the rules read.
type chatRequestParams struct {
	temperature   *float64
	maxTokens     bool // max_tokens was sent (not null)
	maxCompletion int  // max_completion_tokens, else max_tokens; 0 when neither
}

// chatParams reads the parameters from a body, by exact key as OpenAI does.
func chatParams(body []byte) (chatRequestParams, *apiError) {
	var p chatRequestParams
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return p, invalid("We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)", "", "")
	}
	present := func(k string) bool { v, ok := fields[k]; return ok && string(v) != "null" }
	if present("temperature") {
		var t float64
		if json.Unmarshal(fields["temperature"], &t) != nil {
			return p, invalid("Invalid type for 'temperature': expected a decimal, but got "+string(fields["temperature"])+" instead.", "temperature", "invalid_type")
		}
		p.temperature = &t
	}
	for _, k := range []string{"max_tokens", "max_completion_tokens"} {
		if !present(k) {
			continue
		}
		var n int
		if json.Unmarshal(fields[k], &n) != nil {
			return p, invalid("Invalid type for '"+k+"': expected an integer, but got "+string(fields[k])+" instead.", k, "invalid_type")
		}
		if k == "max_tokens" {
			p.maxTokens = true
		}
		p.maxCompletion = n
	}
	return p, nil
}

// checkReasoning applies a reasoning model's refusals, with OpenAI's
// messages: a temperature other than the default 1 is an unsupported value,
// max_tokens an unsupported parameter.
func (p chatRequestParams) checkReasoning() *apiError {
	if p.temperature != nil && *p.temperature != 1 {
		return invalid(fmt.Sprintf("Unsupported value: 'temperature' does not support %s with this model. Only the default (1) value is supported.",
			strconv.FormatFloat(*p.temperature, 'g', -1, 64)), "temperature", "unsupported_value")
	}
	if p.maxTokens {
		return invalid("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
			"max_tokens", "unsupported_parameter")
	}
	return nil
}

// content is the text of answer i.
func (r Reply) content(i int) string {
	if i > 0 && i <= len(r.Others) {
		return r.Others[i-1]
	}
	return r.Content
}

func (s *Server) complete(w http.ResponseWriter, rec *Request, key, id string, reply Reply, prompt int) {
	var choices []completionChoice
	completionTokens := 0
	for i := range rec.N {
		msg := message{Role: "assistant"}
		finish := "stop"
		if len(reply.ToolCalls) > 0 {
			finish = "tool_calls"
			for _, tc := range reply.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, fullToolCall{ID: tc.ID, Type: "function", Function: function{Name: tc.Name, Arguments: tc.Arguments}})
				completionTokens += len(strings.Fields(tc.Arguments)) + 1
			}
		} else {
			c := reply.content(i)
			msg.Content = &c
			completionTokens += len(Words(c))
		}
		choices = append(choices, completionChoice{Index: i, Message: msg, FinishReason: finish})
	}
	c := completion{ID: id, Object: "chat.completion", Created: s.cfg.Created, Model: rec.Model, Choices: choices,
		SystemFingerprint: s.cfg.Fingerprint}
	if !reply.NoUsage {
		c.Usage = &usage{PromptTokens: prompt, CompletionTokens: completionTokens, TotalTokens: prompt + completionTokens}
	}
	s.bill(key, chatEndpoint, rec.Model, prompt+completionTokens)
	writeJSON(w, http.StatusOK, c)
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, rec *Request, key, id string, reply Reply, prompt int, f *Fault) {
	ctx := r.Context()
	flusher, _ := w.(http.Flusher)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if f != nil && f.DropAfterHeaders {
		if flusher != nil {
			flusher.Flush()
		}
		panic(http.ErrAbortHandler)
	}
	if !s.firstToken(ctx, flusher, reply) {
		return
	}
	base := chunk{ID: id, Object: "chat.completion.chunk", Created: s.cfg.Created, Model: rec.Model, SystemFingerprint: s.cfg.Fingerprint}
	// Each answer's deltas, after its role chunk; the answers' chunks go out in turn.
	answers := make([][]chunk, rec.N)
	empty := ""
	finish := "stop"
	completionTokens := 0
	for i := range answers {
		a := []chunk{withChoice(base, i, delta{Role: "assistant", Content: &empty}, nil)}
		if len(reply.ToolCalls) > 0 {
			finish = "tool_calls"
			for k, tc := range reply.ToolCalls {
				a = append(a, withChoice(base, i, delta{ToolCalls: []toolCallDelta{{Index: k, ID: tc.ID, Type: "function",
					Function: function{Name: tc.Name, Arguments: tc.Arguments}}}}, nil))
				completionTokens += len(strings.Fields(tc.Arguments)) + 1
			}
		} else {
			for _, word := range Words(reply.content(i)) {
				word := word
				a = append(a, withChoice(base, i, delta{Content: &word}, nil))
				completionTokens++
			}
		}
		answers[i] = a
	}
	var frames []chunk
	for k := 0; ; k++ {
		more := false
		for _, a := range answers {
			if k < len(a) {
				frames, more = append(frames, a[k]), true
			}
		}
		if !more {
			break
		}
	}
	for i := range answers {
		frames = append(frames, withChoice(base, i, delta{}, &finish))
	}
	// Billed when the answer is decided: OpenAI bills what it generates,
	// whether or not the caller reads it to the end.
	s.bill(key, chatEndpoint, rec.Model, prompt+completionTokens)
	if rec.IncludeUsage && !reply.NoUsage {
		u := base
		u.Choices = []chunkChoice{}
		u.Usage = &usage{PromptTokens: prompt, CompletionTokens: completionTokens, TotalTokens: prompt + completionTokens}
		frames = append(frames, u)
	}
	buf := make([]byte, 0, 512)
	pause := s.cfg.ChunkDelay
	if reply.ChunkDelay > 0 {
		pause = reply.ChunkDelay
	}
	for i, fr := range frames {
		if i > 0 && !sleepCtx(ctx, pause) {
			return
		}
		if f != nil && f.DropAfter > 0 && i == f.DropAfter {
			panic(http.ErrAbortHandler)
		}
		if f != nil && (f.StallAfter > 0 && i == f.StallAfter || f.EndlessEvent && i == 1) {
			s.stall(ctx, w, flusher, f.EndlessEvent)
			return
		}
		b, _ := json.Marshal(fr)
		if rec.IncludeUsage && fr.Usage == nil {
			// OpenAI sends "usage":null on every chunk once usage is asked for.
			b = append(b[:len(b)-1], `,"usage":null}`...)
		}
		buf = append(buf[:0], "data: "...)
		buf = append(buf, b...)
		buf = append(buf, "\n\n"...)
		if _, err := w.Write(buf); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		s.mu.Lock()
		rec.Chunks++
		s.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
	}
	_, _ = w.Write([]byte("data: [DONE]\n\n"))
	if flusher != nil {
		flusher.Flush()
	}
}

func withChoice(base chunk, index int, d delta, finish *string) chunk {
	base.Choices = []chunkChoice{{Index: index, Delta: d, FinishReason: finish}}
	return base
}

// stall keeps a stream open without finishing it until ctx ends: silent, or writing one endless data: line.
func (s *Server) stall(ctx context.Context, w http.ResponseWriter, flusher http.Flusher, endless bool) {
	if !endless {
		<-ctx.Done()
		return
	}
	junk := bytes.Repeat([]byte("x"), 64<<10)
	if _, err := w.Write([]byte("data: ")); err != nil {
		return
	}
	for ctx.Err() == nil {
		if _, err := w.Write(junk); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}
