package summary

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ragproxy/ragproxy/compat"
)

// LLMPrompt is the instruction given to the summarising model (the FHNW prototype: one dense line per page; we add that
// dates and deadlines stay out, because summaries outlive the page's current term).
const LLMPrompt = `You summarise one web page for a search index. Write a single dense line of at most 80 words ` +
	`that names what the page is about and the specific facts, programs, offices, requirements and terms it ` +
	`contains. Use only facts stated in the page. Leave out dates and deadlines. No preamble, no markdown.`

// DefaultModel is the chat model LLM uses when Model is empty.
const DefaultModel = "gpt-4o-mini"

// Completer sends one chat request upstream and returns the completion's body; *compat.Client implements it, with
// the proxy's timeouts, retry rules and failover.
type Completer interface {
	Complete(ctx context.Context, call *compat.Call) ([]byte, compat.Served, error)
}

var _ Completer = (*compat.Client)(nil)

// LLM writes summaries with an OpenAI-compatible chat model.
type LLM struct {
	// Client sends the requests. Required.
	Client Completer
	// Model is the chat model; default gpt-4o-mini.
	Model string
	// MaxInputChars bounds the page text sent; default 24000 (about 6k tokens).
	MaxInputChars int
}

// Summarize returns a one-line summary of d.
func (l *LLM) Summarize(ctx context.Context, d Doc) (string, error) {
	model := l.Model
	if model == "" {
		model = DefaultModel
	}
	limit := l.MaxInputChars
	if limit == 0 {
		limit = 24000
	}
	text := d.Markdown
	if len(text) > limit {
		text = text[:limit]
	}
	call, err := compat.NewTextCall(model, []compat.Message{
		compat.TextMessage("system", LLMPrompt),
		compat.TextMessage("user", "Title: "+d.Title+"\n\n"+text),
	}, map[string]any{"temperature": 0})
	if err != nil {
		return "", fmt.Errorf("summarize %q: %w", d.Title, err)
	}
	resp, _, err := l.Client.Complete(ctx, call)
	if err != nil {
		return "", fmt.Errorf("summarize %q: %w", d.Title, err)
	}
	content, err := compat.FirstContent(resp)
	if err != nil {
		return "", fmt.Errorf("summarize %q: %w", d.Title, err)
	}
	line := strings.Join(strings.Fields(content), " ")
	if line == "" {
		return "", fmt.Errorf("summarize %q: %w", d.Title, errors.New("empty summary"))
	}
	return line, nil
}
