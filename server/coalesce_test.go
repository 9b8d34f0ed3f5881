package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat"
)

// readyChunks is a chunkSource whose chunks are all at hand (Ready) or each arrives on its own.
type readyChunks struct {
	chunks [][]byte
	i      int
	ready  bool
}

func (r *readyChunks) Next() bool    { r.i++; return r.i <= len(r.chunks) }
func (r *readyChunks) Chunk() []byte { return r.chunks[r.i-1] }
func (r *readyChunks) Err() error    { return nil }
func (r *readyChunks) Close() error  { return nil }
func (r *readyChunks) Ready() bool   { return r.ready }

// writes records each write that reaches the connection.
type writes struct{ calls [][]byte }

func (w *writes) Write(p []byte) (int, error) {
	w.calls = append(w.calls, bytes.Clone(p))
	return len(p), nil
}

// TestRelayCoalescesReadyFrames checks that the frames of chunks that are at hand together go out in one write,
// that a chunk with nothing behind it goes out at once, and that the bytes are the same either way.
func TestRelayCoalescesReadyFrames(t *testing.T) {
	chunks := [][]byte{[]byte(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`)}
	for _, word := range []string{"one", " two", " three"} {
		chunks = append(chunks, fmt.Appendf(nil, `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`, word))
	}
	chunks = append(chunks, []byte(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`))
	s := New(Config{Heartbeat: time.Hour}, nil)
	relay := func(ready bool) *writes {
		w := &writes{}
		bw := bufio.NewWriterSize(w, 64<<10)
		sw := newSSEWriter(bw, func() {})
		st := &chatState{start: time.Now(), req: &compat.ChatRequest{Model: "m", Stream: true}}
		out := s.relay(context.Background(), sw, st, &readyChunks{chunks: chunks, ready: ready}, &Grounding{}, outcome{})
		if out.err != nil {
			t.Fatal(out.err)
		}
		return w
	}
	together, apart := relay(true), relay(false)
	if len(together.calls) != 1 {
		t.Errorf("chunks at hand together took %d writes, want 1", len(together.calls))
	}
	if len(apart.calls) != len(chunks)+1 {
		t.Errorf("chunks arriving one by one took %d writes, want one each and one for [DONE]: %d", len(apart.calls), len(chunks)+1)
	}
	a, b := bytes.Join(together.calls, nil), bytes.Join(apart.calls, nil)
	if !bytes.Equal(a, b) {
		t.Errorf("the stream differs with coalescing:\n%s\nwithout:\n%s", a, b)
	}
	if !bytes.HasSuffix(a, frameDone) || bytes.Count(a, framePrefix) != len(chunks)+1 {
		t.Errorf("stream = %s, want %d chunk frames and [DONE]", a, len(chunks))
	}
}
