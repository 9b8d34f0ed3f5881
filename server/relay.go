package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/upstream"
)

// chunkSource yields raw chat.completion.chunk objects: an upstream
// *upstream.Stream or an answer the Grounder wrote.
type chunkSource interface {
	Next() bool
	Chunk() []byte
	Err() error
	Close() error
}

// readySource is a chunkSource that knows whether Next would return at once: its next chunk, or its end, is
// already at hand.
type readySource interface {
	Ready() bool
}

var (
	_ chunkSource = (*upstream.Stream)(nil)
	_ readySource = (*upstream.Stream)(nil)
	_ readySource = (*answerSource)(nil)
)

// relay turns the source's chunks into the frames the client gets: it keeps
// one id, makes sure each answer's first delta carries the role, runs a
// content filter per answer (a request with n > 1 gets several, told apart by
// their choice index), adds each answer's trailer with its annotations before
// its finish, and drops the usage chunk the client did not ask for. Chunks
// pass through byte for byte unless one of those edits applies.
type relay struct {
	includeUsage bool
	newFilter    func() ContentFilter
	// events are the Grounding's events; cited are those the answers'
	// filters reported instead (nil while none did).
	events []json.RawMessage
	cited  []json.RawMessage

	builder compat.ChunkBuilder
	// in is the chunk last read, whose memory the next one reuses.
	in         compat.Chunk
	choices    map[int]*choiceRelay
	firstToken bool
	// finished reports that every answer seen has finished; unfinished counts those that have not.
	finished   bool
	unfinished int
	// finishReason is the upstream's finish_reason for the first answer;
	// special reports a delta with more than text (tool calls, a refusal),
	// which an answer kept as text cannot reproduce.
	finishReason string
	special      bool
	usage        *compat.Usage
	// contentBytes counts the answers' text as the upstream sent it, which the rate limits charge when the
	// upstream reports no usage.
	contentBytes int
	collect      bool
	content      strings.Builder // the first answer's text

	onFirstToken func()
}

// choiceRelay is the state of one answer (one choice index) of the response.
type choiceRelay struct {
	filter      ContentFilter // nil without grounding
	sawRole     bool
	finished    bool
	annotations []compat.Annotation
}

// choice returns the state of the answer with index i, starting it on first sight.
func (r *relay) choice(i int) *choiceRelay {
	if r.choices == nil {
		r.choices = make(map[int]*choiceRelay, 1)
	}
	cr, ok := r.choices[i]
	if !ok {
		cr = &choiceRelay{}
		r.unfinished++
		if r.newFilter != nil {
			cr.filter = r.newFilter()
		}
		r.choices[i] = cr
	}
	return cr
}

// answerAnnotations are the annotations of the first answer, as its trailer carried them.
func (r *relay) answerAnnotations() []compat.Annotation {
	if cr, ok := r.choices[0]; ok {
		return cr.annotations
	}
	return nil
}

// sentEvents are the events that go out after the answers: those the answers' filters reported, else the
// Grounding's.
func (r *relay) sentEvents() []json.RawMessage {
	if r.cited != nil {
		return r.cited
	}
	return r.events
}

// chunk handles one upstream chunk, passing the frames to emit.
func (r *relay) chunk(raw []byte, emit func([]byte) error) error {
	err := compat.ReadChunk(raw, &r.in)
	if err != nil {
		return compat.UpstreamUnreachable("", fmt.Errorf("relay: %w", err))
	}
	c := &r.in
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
	if len(c.Choices) == 0 {
		if c.Usage != nil && !r.includeUsage {
			return nil // we asked for it; the client did not
		}
		return emit(raw)
	}
	// An answer's finish goes out as the filtered rest and trailer, in a delta of their own that carries the
	// answer's annotations, then the finish chunk.
	var trailers [][]byte
	for pos, ch := range c.Choices {
		r.special = r.special || ch.Special
		cr := r.choice(ch.Index)
		if !cr.sawRole {
			cr.sawRole = true
			if ch.Role == "" {
				if raw, err = compat.SetDeltaRole(raw, pos, "assistant"); err != nil {
					return fmt.Errorf("relay: %w", err)
				}
			}
		}
		r.contentBytes += len(ch.Content)
		if ch.Content != "" && !r.firstToken {
			r.firstToken = true
			if r.onFirstToken != nil {
				r.onFirstToken()
			}
		}
		text := ch.Content
		if cr.filter != nil && ch.HasContent {
			text = cr.filter.Filter(ch.Content)
		}
		if ch.FinishReason == "" {
			if cr.filter != nil && ch.HasContent {
				if raw, err = compat.SetDeltaContent(raw, pos, text); err != nil {
					return fmt.Errorf("relay: %w", err)
				}
			}
			r.keep(ch.Index, text)
			continue
		}
		if cr.filter != nil {
			if ch.HasContent {
				if raw, err = compat.DeleteDeltaContent(raw, pos); err != nil {
					return fmt.Errorf("relay: %w", err)
				}
			}
			text += cr.filter.Trailer()
			anns, events := citations(cr.filter)
			cr.annotations = anns
			if events != nil {
				r.cited = appendEvents(r.cited, events)
			}
			if text != "" || len(anns) > 0 {
				trailers = append(trailers, r.builder.ForChoice(ch.Index).Content(text, anns...))
			}
		}
		r.keep(ch.Index, text)
		if !cr.finished {
			cr.finished = true
			r.unfinished--
		}
		if ch.Index == 0 {
			r.finishReason = ch.FinishReason
		}
	}
	for _, t := range trailers {
		if err := emit(t); err != nil {
			return err
		}
	}
	r.finished = r.unfinished == 0
	return emit(raw)
}

// appendEvents appends the events of add that dst does not hold yet (answers citing the same page report the
// same event); dst is never nil after it.
func appendEvents(dst, add []json.RawMessage) []json.RawMessage {
	if dst == nil {
		dst = []json.RawMessage{}
	}
	for _, a := range add {
		if !slices.ContainsFunc(dst, func(d json.RawMessage) bool { return bytes.Equal(d, a) }) {
			dst = append(dst, a)
		}
	}
	return dst
}

var (
	nullUsage = []byte(`,"usage":null`)
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

// keep collects the first answer's text for the log and the response cache.
func (r *relay) keep(index int, text string) {
	if r.collect && index == 0 {
		r.content.WriteString(text)
	}
}

// answerSource streams a Grounder's answer like a model would: role, content
// deltas, finish (once per answer when the request asks for n of them, all
// the same text), usage.
type answerSource struct {
	chunks [][]byte
	i      int
}

func newAnswerSource(b compat.ChunkBuilder, a *Answer, n int) *answerSource {
	src := &answerSource{i: -1}
	deltas := compat.SplitDeltas(a.Text, 48)
	for i := range max(n, 1) {
		c := b.ForChoice(i)
		src.chunks = append(src.chunks, c.Role())
		for j, d := range deltas {
			if j == len(deltas)-1 {
				src.chunks = append(src.chunks, c.Content(d, a.Annotations...)) // the answer's citations travel together
				continue
			}
			src.chunks = append(src.chunks, c.Content(d))
		}
		src.chunks = append(src.chunks, c.Finish("stop"))
	}
	src.chunks = append(src.chunks, b.Usage(a.usage(n)))
	return src
}

func (a *answerSource) Next() bool {
	a.i++
	return a.i < len(a.chunks)
}

func (a *answerSource) Chunk() []byte { return a.chunks[a.i] }

func (a *answerSource) Err() error   { return nil }
func (a *answerSource) Close() error { return nil }

// Ready reports that Next never waits: the whole answer goes out in one write.
func (a *answerSource) Ready() bool { return true }
