package upstream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/llm"
)

// Asker adapts a Client to llm.Ask: it writes a Prompt as a chat completions request (a system and a user
// message, temperature, and OpenAI's response_format json_schema for strict JSON output, API reference "Structured
// Outputs") and reads the first choice's content and the usage of the completion. It is the one place that knows
// how the proxy's own requests look on the wire. An Asker is safe for concurrent use.
type Asker struct {
	// Client sends the requests, with its timeouts, retries and failover. Required.
	Client *Client
	// Model is the model asked when a prompt names none; "" means the primary upstream's configured Model
	// (a fallback upstream always asks for its own).
	Model string
}

var _ llm.Ask = Asker{}.Ask

// errNoContent fails an Ask whose completion has no text to return (a tool call, an empty choices array).
var errNoContent = errors.New("completion without content")

// Ask implements llm.Ask.
func (a Asker) Ask(ctx context.Context, p llm.Prompt) (llm.Reply, error) {
	call, err := a.call(p)
	if err != nil {
		return llm.Reply{}, err
	}
	if p.OnText != nil {
		return a.stream(ctx, call, p.OnText)
	}
	body, _, err := a.Client.Complete(ctx, call)
	if err != nil {
		return llm.Reply{}, err
	}
	info, err := compat.ParseCompletion(body)
	if err != nil {
		return llm.Reply{}, err
	}
	if len(info.Choices) == 0 || !info.Choices[0].HasContent {
		return llm.Reply{}, errNoContent
	}
	r := llm.Reply{Text: info.Choices[0].Content}
	if u := info.Usage; u != nil {
		r.Usage = llm.Usage{Prompt: u.PromptTokens, Completion: u.CompletionTokens}
	}
	return r, nil
}

// stream sends call as a streaming request and calls onText with the text so far after each content delta of
// the first choice; the usage comes from the final chunk (stream_options.include_usage).
func (a Asker) stream(ctx context.Context, call *Call, onText func(string)) (llm.Reply, error) {
	st, _, err := a.Client.Stream(ctx, call)
	if err != nil {
		return llm.Reply{}, err
	}
	defer st.Close()
	var (
		text strings.Builder
		r    llm.Reply
		saw  bool
		c    compat.Chunk
	)
	for st.Next() {
		if err := compat.ReadChunk(st.Chunk(), &c); err != nil {
			return llm.Reply{}, err
		}
		if u := c.Usage; u != nil {
			r.Usage = llm.Usage{Prompt: u.PromptTokens, Completion: u.CompletionTokens}
		}
		for _, ch := range c.Choices {
			if ch.Index == 0 && ch.HasContent {
				saw = true
				if ch.Content != "" {
					text.WriteString(ch.Content)
					onText(text.String())
				}
			}
		}
	}
	if err := st.Err(); err != nil {
		return llm.Reply{}, err
	}
	if !saw {
		return llm.Reply{}, errNoContent
	}
	r.Text = text.String()
	return r, nil
}

// call writes p as the Call to send.
func (a Asker) call(p llm.Prompt) (*Call, error) {
	model := cmp.Or(p.Model, a.Model)
	extra := map[string]any{"temperature": p.Temperature}
	if p.OnText != nil {
		extra["stream"] = true
		extra["stream_options"] = map[string]any{"include_usage": true}
	}
	if p.MaxTokens > 0 {
		extra["max_tokens"] = p.MaxTokens
	}
	if s := p.JSON; s != nil {
		extra["response_format"] = map[string]any{"type": "json_schema",
			"json_schema": map[string]any{"name": s.Name, "strict": true, "schema": s.Definition}}
	}
	req, err := compat.NewTextRequest(model, []compat.Message{
		compat.TextMessage("system", p.System),
		compat.TextMessage("user", p.User),
	}, extra)
	if err != nil {
		return nil, fmt.Errorf("ask: %w", err)
	}
	return &Call{Request: req, Model: model}, nil
}
