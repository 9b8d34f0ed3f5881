package upstream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/tidwall/gjson"
)

// Stream reads an upstream's chat-completion event stream and yields each
// chunk's raw JSON, never decoding it into typed structs. It is not safe for
// concurrent use.
type Stream struct {
	events  *eventReader
	guard   *guardedBody
	body    io.ReadCloser
	release func()
	// detach makes the request's context stop following the caller's (nil: no such context); see Close.
	detach   func() bool
	upstream string
	cur      []byte
	peeked   bool
	done     bool
	err      error
}

func newStream(res *http.Response, release func(), upstream string, maxLine int, readers *sync.Pool) *Stream {
	s := &Stream{release: release, upstream: upstream}
	if res != nil && res.Body != nil {
		s.guard = &guardedBody{r: res.Body, maxLine: maxLine, cancel: release}
		res.Body = s.guard
		s.body = res.Body
	}
	if s.body != nil {
		s.events = newPooledEventReader(s.body, readers)
	}
	return s
}

// idle bounds every later wait for the stream's next bytes by d.
func (s *Stream) idle(d time.Duration) {
	if s.guard != nil {
		s.guard.arm(d)
	}
}

// Errors that end an upstream stream the proxy gave up on, or that ended
// wrongly.
var (
	errEventTooLarge = errors.New("upstream stream event too large")
	errStreamIdle    = errors.New("upstream stream idle")
	errEmptyResponse = errors.New("empty response")
	errNoDone        = errors.New("stream ended without [DONE]")
)

// guardedBody bounds what reading an upstream stream may cost: a line (an event's data) longer than maxLine fails
// the read, so one endless event cannot grow memory without bound, and once armed, a read that waits longer than
// the idle time for the next bytes cancels the request, so a stalled stream ends instead of being pinged forever.
type guardedBody struct {
	r        io.ReadCloser
	maxLine  int
	line     int // bytes since the last newline
	cancel   func()
	timer    *time.Timer
	idleFor  time.Duration
	timedOut atomic.Bool
}

func (g *guardedBody) arm(d time.Duration) {
	if d > 0 {
		g.idleFor = d
		g.timer = time.AfterFunc(time.Hour, func() {
			g.timedOut.Store(true)
			g.cancel()
		})
		g.timer.Stop()
	}
}

func (g *guardedBody) Read(p []byte) (int, error) {
	if g.timer != nil {
		g.timer.Reset(g.idleFor)
	}
	n, err := g.r.Read(p)
	if g.timer != nil {
		g.timer.Stop()
	}
	if g.timedOut.Load() {
		return n, errStreamIdle
	}
	if g.maxLine > 0 {
		chunk := p[:n]
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			g.line = len(chunk) - i - 1
		} else {
			g.line += len(chunk)
		}
		if g.line > g.maxLine {
			return n, errEventTooLarge
		}
	}
	return n, err
}

func (g *guardedBody) Close() error {
	if g.timer != nil {
		g.timer.Stop()
	}
	return g.r.Close()
}

// peek reads the first event so the caller can retry when none comes.
func (s *Stream) peek() bool {
	if !s.advance() {
		return s.done && s.err == nil
	}
	s.peeked = true
	return true
}

func (s *Stream) advance() bool {
	if s.done || s.err != nil {
		return false
	}
	if s.events == nil {
		s.err = compat.UpstreamUnreachable(s.upstream, errEmptyResponse)
		return false
	}
	for {
		ev, ok := s.events.next()
		if !ok {
			break
		}
		data := bytes.TrimRight(ev, "\n")
		if len(data) == 0 {
			continue
		}
		if bytes.HasPrefix(data, []byte("[DONE]")) {
			s.done = true
			return false
		}
		// A chunk without the bytes "error" has no such key, and most chunks are not read for it.
		if e := errorField(data); e.Exists() {
			// An error event inside a 200 stream (vLLM, Ollama, OpenAI's
			// server_error mid-stream).
			s.err = &compat.APIError{Status: http.StatusBadGateway, Type: compat.TypeServer, Upstream: s.upstream,
				Message: e.Get("message").String(), Body: append([]byte(nil), data...)}
			if e.Get("type").String() != "" {
				s.err.(*compat.APIError).Type = e.Get("type").String()
			}
			return false
		}
		s.cur = data
		return true
	}
	if err := s.events.failed(); err != nil {
		switch {
		case errors.Is(err, errStreamIdle):
			s.err = compat.UpstreamTimeout(s.upstream, fmt.Errorf("upstream %s: %w", s.upstream, err))
		case errors.Is(err, errEventTooLarge):
			s.err = compat.UpstreamUnreachable(s.upstream, fmt.Errorf("upstream %s: %w", s.upstream, err))
		default:
			s.err = compat.UpstreamUnreachable(s.upstream, err)
		}
		return false
	}
	// EOF without [DONE]: treat as a dropped connection.
	s.err = compat.UpstreamUnreachable(s.upstream, errNoDone)
	return false
}

var errorKey = []byte(`"error"`)

// errorField returns the event's top-level "error" field; it parses the event only when the bytes "error" are in it.
func errorField(data []byte) gjson.Result {
	if !bytes.Contains(data, errorKey) {
		return gjson.Result{}
	}
	return gjson.GetBytes(data, "error")
}

// Next advances to the next chunk; it returns false at [DONE] or on error.
func (s *Stream) Next() bool {
	if s.peeked {
		s.peeked = false
		return true
	}
	return s.advance()
}

// Chunk returns the current chunk's raw JSON, valid until the next call of Next.
func (s *Stream) Chunk() []byte { return s.cur }

// Ready reports whether Next returns without waiting for the upstream: the next event is already read, or the
// stream has ended. The proxy sends the frames that arrived together in one write, and flushes when the upstream
// has nothing more at hand.
func (s *Stream) Ready() bool {
	if s.peeked || s.done || s.err != nil || s.events == nil {
		return true
	}
	return s.events.ready()
}

// Err returns the error that ended the stream, or nil after [DONE].
func (s *Stream) Err() error { return s.err }

// Upstream names the upstream serving the stream.
func (s *Stream) Upstream() string { return s.upstream }

// Close releases the upstream connection and cancels its request. After [DONE], the rest of the body (the end
// of its chunked encoding) is read first, so that the connection goes back to the pool instead of being closed;
// that happens on a goroutine of its own, its request detached from the caller's context, since those bytes may
// still be on their way and the caller (the proxy, whose client is waiting for the end of its own response) has
// no reason to wait for them.
func (s *Stream) Close() error {
	if s.done && s.body != nil {
		// Detached first: the caller's request may end (and cancel its context) before the rest has been read.
		if s.detach != nil && s.detach() {
			body, events, release := s.body, s.events, s.release
			s.body, s.events, s.release = nil, nil, nil
			go func() {
				// Bounded: by the limit, by the stream's idle timeout, and by the end of the upstream's response.
				_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
				_ = body.Close()
				if events != nil {
					events.close()
				}
				if release != nil {
					release()
				}
			}()
			return nil
		}
		if s.detach == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(s.body, 64<<10))
		}
	}
	var err error
	if s.body != nil {
		err = s.body.Close()
	}
	if s.events != nil {
		s.events.close()
	}
	if s.release != nil {
		s.release()
	}
	return err
}
