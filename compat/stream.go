package compat

import (
	"bytes"
	"io"
	"net/http"

	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/tidwall/gjson"
)

// Stream reads an upstream's chat-completion event stream and yields each
// chunk's raw JSON, never decoding it into typed structs. It is not safe for
// concurrent use.
type Stream struct {
	dec      ssestream.Decoder
	body     io.ReadCloser
	release  func()
	upstream string
	cur      []byte
	peeked   bool
	done     bool
	err      error
}

func newStream(res *http.Response, release func(), upstream string) *Stream {
	s := &Stream{dec: ssestream.NewDecoder(res), release: release, upstream: upstream}
	if res != nil {
		s.body = res.Body
	}
	return s
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
	if s.dec == nil {
		s.err = UpstreamUnreachable(s.upstream, errEmptyResponse)
		return false
	}
	for s.dec.Next() {
		ev := s.dec.Event()
		data := bytes.TrimRight(ev.Data, "\n")
		if len(data) == 0 {
			continue
		}
		if bytes.HasPrefix(data, []byte("[DONE]")) {
			s.done = true
			return false
		}
		if e := gjson.GetBytes(data, "error"); e.Exists() {
			// An error event inside a 200 stream (vLLM, Ollama, OpenAI's
			// server_error mid-stream).
			s.err = &APIError{Status: http.StatusBadGateway, Type: TypeServer, Upstream: s.upstream,
				Message: e.Get("message").String(), Body: append([]byte(nil), data...)}
			if e.Get("type").String() != "" {
				s.err.(*APIError).Type = e.Get("type").String()
			}
			return false
		}
		s.cur = data
		return true
	}
	if err := s.dec.Err(); err != nil {
		s.err = UpstreamUnreachable(s.upstream, err)
		return false
	}
	// EOF without [DONE]: treat as a dropped connection.
	s.err = UpstreamUnreachable(s.upstream, errNoDone)
	return false
}

// Next advances to the next chunk; it returns false at [DONE] or on error.
func (s *Stream) Next() bool {
	if s.peeked {
		s.peeked = false
		return true
	}
	return s.advance()
}

// Chunk returns the current chunk's raw JSON. It stays valid after Next.
func (s *Stream) Chunk() []byte { return s.cur }

// Err returns the error that ended the stream, or nil after [DONE].
func (s *Stream) Err() error { return s.err }

// Upstream names the upstream serving the stream.
func (s *Stream) Upstream() string { return s.upstream }

// Close releases the upstream connection and cancels its request.
func (s *Stream) Close() error {
	var err error
	if s.done && s.body != nil {
		// Read the rest (the chunked terminator) so the connection goes back
		// to the pool instead of being closed.
		_, _ = io.Copy(io.Discard, io.LimitReader(s.body, 64<<10))
	}
	if s.dec != nil {
		err = s.dec.Close()
	}
	if s.release != nil {
		s.release()
	}
	return err
}
