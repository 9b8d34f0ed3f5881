package summary

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/ragproxy/ragproxy/llm"
)

// LLMPrompt is the instruction given to the summarising model (the FHNW prototype: one dense line per page; we add that
// dates and deadlines stay out, because summaries outlive the page's current term).
const LLMPrompt = `You summarise one web page for a search index. Write a single dense line of at most 80 words ` +
	`that names what the page is about and the specific facts, programs, offices, requirements and terms it ` +
	`contains. Use only facts stated in the page. Leave out dates and deadlines. No preamble, no markdown.`

// DefaultModel is the chat model LLM uses when Model is empty.
const DefaultModel = "gpt-4o-mini"

// LLM writes summaries with an OpenAI-compatible chat model.
type LLM struct {
	// Ask asks the model. Required.
	Ask llm.Ask
	// Model is the chat model, asked for by name: an index records the model that wrote its summaries, and
	// pages added to it later must be summarised by the same one. Default gpt-4o-mini.
	Model string
	// MaxInputChars bounds the page text sent; default 24000 (about 6k tokens).
	MaxInputChars int
}

// Summarize returns a one-line summary of d and the tokens the model reported for it.
func (l *LLM) Summarize(ctx context.Context, d Doc) (string, llm.Usage, error) {
	model := l.Model
	if model == "" {
		model = DefaultModel
	}
	limit := l.maxInput()
	text := d.Markdown
	if len(text) > limit {
		text = text[:limit]
	}
	reply, err := l.Ask(ctx, llm.Prompt{Model: model, System: LLMPrompt, User: "Title: " + d.Title + "\n\n" + text})
	if err != nil {
		return "", llm.Usage{}, fmt.Errorf("summarize %q: %w", d.Title, err)
	}
	line := strings.Join(strings.Fields(reply.Text), " ")
	if line == "" {
		return "", reply.Usage, fmt.Errorf("summarize %q: %w", d.Title, errors.New("empty summary"))
	}
	return line, reply.Usage, nil
}

// Version identifies what shapes a summary besides the model and the page: the prompt and the input bound. A
// summary kept under one Version is reused only under the same.
func (l *LLM) Version() string {
	h := sha256.Sum256([]byte(LLMPrompt))
	return fmt.Sprintf("%x/%d", h[:8], l.maxInput())
}

func (l *LLM) maxInput() int {
	if l.MaxInputChars == 0 {
		return 24000
	}
	return l.MaxInputChars
}
