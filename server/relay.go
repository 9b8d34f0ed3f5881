package server

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/ragproxy/ragproxy/compat"
)

// chunkSource yields raw chat.completion.chunk objects: an upstream
// *compat.Stream or an answer the Grounder wrote.
type chunkSource interface {
	Next() bool
	Chunk() []byte
	Err() error
	Close() error
}

var _ chunkSource = (*compat.Stream)(nil)

// relay turns the source's chunks into the frames the client gets: it keeps
// one id, makes sure the first delta carries the role, runs the content
// filter, adds the trailer and sources before the finish, and drops the
// usage chunk the client did not ask for. Chunks pass through byte for byte
// unless one of those edits applies.
type relay struct {
	includeUsage bool
	filter       ContentFilter
	sources      []compat.Source

	builder    compat.ChunkBuilder
	sawChoice  bool
	firstToken bool
	finished   bool
	// finishReason is the upstream's finish_reason; special reports a
	// delta with more than text (tool calls, a refusal), which an answer
	// kept as text cannot reproduce.
	finishReason string
	special      bool
	usage        *compat.Usage
	collect      bool
	content      strings.Builder

	onFirstToken func()
}

// chunk handles one upstream chunk, passing the frames to emit.
func (r *relay) chunk(raw []byte, emit func([]byte) error) error {
	c, err := compat.ParseChunk(raw)
	if err != nil {
		return compat.UpstreamUnreachable("", fmt.Errorf("relay: %w", err))
	}
	if r.builder.ID == "" {
		r.builder = compat.ChunkBuilder{ID: c.ID, Model: c.Model, Created: c.Created}
	} else if c.ID != r.builder.ID {
		// OpenAI sends one id on every chunk; some upstreams do not.
		if raw, err = compat.SetChunkID(raw, r.builder.ID); err != nil {
			return fmt.Errorf("relay: %w", err)
		}
	}
	if c.Usage != nil {
		r.usage = c.Usage
	}
	if !r.includeUsage && c.Usage == nil {
		raw = stripNullUsage(raw)
	}
	if c.Choices == 0 {
		if c.Usage != nil && !r.includeUsage {
			return nil // we asked for it; the client did not
		}
		return emit(raw)
	}
	if bytes.Contains(raw, toolCallsKey) || bytes.Contains(raw, refusalKey) {
		r.special = true
	}
	if !r.sawChoice {
		r.sawChoice = true
		if c.Role == "" {
			if raw, err = compat.SetDeltaRole(raw, "assistant"); err != nil {
				return fmt.Errorf("relay: %w", err)
			}
		}
	}
	if c.Content != "" && !r.firstToken {
		r.firstToken = true
		if r.onFirstToken != nil {
			r.onFirstToken()
		}
	}
	text := c.Content
	if r.filter != nil && c.HasContent {
		text = r.filter.Filter(c.Content)
	}
	if c.FinishReason == "" {
		if r.filter != nil && c.HasContent {
			if raw, err = compat.SetDeltaContent(raw, text); err != nil {
				return fmt.Errorf("relay: %w", err)
			}
		}
		r.keep(text)
		return emit(raw)
	}
	// The finish chunk: the filtered rest and the trailer go out first as
	// their own delta, then the finish chunk carrying the sources.
	if r.filter != nil {
		if c.HasContent {
			if raw, err = compat.DeleteDeltaContent(raw); err != nil {
				return fmt.Errorf("relay: %w", err)
			}
		}
		text += r.filter.Trailer()
		if cited := reportedSources(r.filter); cited != nil {
			r.sources = cited
		}
		if text != "" {
			if err := emit(r.builder.Content(text)); err != nil {
				return err
			}
		}
	}
	r.keep(text)
	if len(r.sources) > 0 {
		if raw, err = compat.SetSources(raw, r.sources); err != nil {
			return fmt.Errorf("relay: %w", err)
		}
	}
	r.finished = true
	r.finishReason = c.FinishReason
	return emit(raw)
}

var (
	nullUsage    = []byte(`,"usage":null`)
	toolCallsKey = []byte(`"tool_calls"`)
	refusalKey   = []byte(`"refusal":"`)
)

// stripNullUsage removes the "usage":null OpenAI adds to every chunk once
// usage is asked for, since the proxy asked on the client's behalf.
func stripNullUsage(raw []byte) []byte {
	i := bytes.Index(raw, nullUsage)
	if i < 0 {
		return raw
	}
	return append(raw[:i:i], raw[i+len(nullUsage):]...)
}

func (r *relay) keep(text string) {
	if r.collect {
		r.content.WriteString(text)
	}
}

// answerSource streams a Grounder's answer like a model would: role, content
// deltas, finish, usage.
type answerSource struct {
	chunks [][]byte
	i      int
}

func newAnswerSource(b compat.ChunkBuilder, a *Answer) *answerSource {
	src := &answerSource{i: -1}
	src.chunks = append(src.chunks, b.Role())
	for _, d := range compat.SplitDeltas(a.Text, 48) {
		src.chunks = append(src.chunks, b.Content(d))
	}
	src.chunks = append(src.chunks, b.Finish("stop", nil), b.Usage(a.Usage))
	return src
}

func (a *answerSource) Next() bool {
	a.i++
	return a.i < len(a.chunks)
}

func (a *answerSource) Chunk() []byte { return a.chunks[a.i] }
func (a *answerSource) Err() error    { return nil }
func (a *answerSource) Close() error  { return nil }
