// Package ssetest reads what the proxy answers, for tests: the data frames of an event-stream transcript and the
// text of an answer, streamed or not.
package ssetest

import (
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/compat"
)

// Frame is one data frame of an event-stream transcript: its JSON and the chunk read from it.
type Frame struct {
	Data  string
	Chunk compat.Chunk
}

// Frames reads the data frames of a transcript, [DONE] and comments left out; a frame that is not a chunk fails
// tb.
func Frames(tb testing.TB, transcript string) []Frame {
	tb.Helper()
	var out []Frame
	for _, f := range strings.Split(transcript, "\n\n") {
		data, ok := strings.CutPrefix(f, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		c, err := compat.ParseChunk([]byte(data))
		if err != nil {
			tb.Fatalf("chunk %q: %v", data, err)
		}
		out = append(out, Frame{data, c})
	}
	return out
}

// Answer is the whole content of the first answer (choice index 0) of a response body: a completion, or a
// transcript whose content deltas it joins.
func Answer(tb testing.TB, body string) string {
	tb.Helper()
	if !strings.HasPrefix(body, "data: ") && !strings.HasPrefix(body, ":") {
		info, err := compat.ParseCompletion([]byte(body))
		if err != nil || len(info.Choices) == 0 {
			tb.Fatalf("completion %s: %v", body, err)
		}
		return info.Choices[0].Content
	}
	var b strings.Builder
	for _, f := range Frames(tb, body) {
		for _, ch := range f.Chunk.Choices {
			if ch.Index == 0 {
				b.WriteString(ch.Content)
			}
		}
	}
	return b.String()
}
