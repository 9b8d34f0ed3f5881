// Package llm is how ragproxy's own stages ask a chat model for text: query analysis and page summaries call an
// Ask with a Prompt and read its Reply, and never see the wire format, the upstream client or its rules. The
// program adapts an Ask once, where it is wired (package upstream's Asker), and that adapter decides which
// model serves which stage and how a request is written for it.
//
// The package holds types only and is safe for concurrent use.
package llm

import "context"

// Ask sends one prompt to a chat model and returns its reply. ctx bounds the whole exchange, retries and
// failover included. An Ask is safe for concurrent use.
type Ask func(ctx context.Context, p Prompt) (Reply, error)

// Prompt is one request to a chat model: an instruction and a text to apply it to.
type Prompt struct {
	// Model names the model to ask; "" (the default) leaves the choice to the Ask. A stage sets it only when
	// its output is recorded under the model that wrote it and must come from that model again (an index's
	// summaries).
	Model string
	// System is the instruction, sent as the system message.
	System string
	// User is the text the instruction applies to, sent as the user message.
	User string
	// JSON, when set, asks for strict JSON output matching its schema; nil (the default) asks for text.
	JSON *Schema
	// MaxTokens bounds the length of the reply in tokens; 0 (the default) leaves it to the model.
	MaxTokens int
	// Temperature is the sampling temperature; 0 (the default) asks for the most likely reply.
	Temperature float64
	// OnText, when set, has the reply streamed: it is called with the text so far each time more arrives, so
	// that a caller can use the start of a reply (the first rewrites of an analysis) before the model has
	// finished it. The Reply is the whole text, as without it. Default nil: one non-streamed request.
	OnText func(sofar string)
}

// Schema is a JSON Schema a reply must match.
type Schema struct {
	// Name names the schema to the model ("query_analysis").
	Name string
	// Definition is the schema as encoding/json encodes it: objects as maps, arrays as slices.
	Definition map[string]any
}

// Reply is a model's answer to a Prompt.
type Reply struct {
	// Text is the answer's content.
	Text string
	// Usage counts the exchange's tokens; zero when the server reported none.
	Usage Usage
}

// Usage counts the tokens of one exchange as the server reported them.
type Usage struct {
	// Prompt counts the tokens sent; Completion those of the answer.
	Prompt, Completion int
}
