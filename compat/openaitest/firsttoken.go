package openaitest

import (
	"context"
	"net/http"
)

// firstToken waits out a reply's FirstTokenDelay the way a model streams: the response headers go out at once
// (a real server answers them before it has generated anything), then nothing until the first token. It
// reports false when the caller went away meanwhile. A completion, which has no headers of its own to send
// early, waits the delay before its body instead (see chat).
//
// Config.FirstByteDelay holds back the headers of every request alike; a reply's FirstTokenDelay lets a test
// give one kind of request (a query analysis) another latency than the rest (the answers).
func (s *Server) firstToken(ctx context.Context, flusher http.Flusher, reply Reply) bool {
	if reply.FirstTokenDelay <= 0 {
		return ctx.Err() == nil
	}
	if flusher != nil {
		flusher.Flush()
	}
	return sleepCtx(ctx, reply.FirstTokenDelay)
}
