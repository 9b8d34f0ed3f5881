package server

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/gofiber/fiber/v2"
	"go.opentelemetry.io/otel/attribute"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/upstream"
)

type opened struct {
	stream *upstream.Stream
	served upstream.Served
	err    error
}

// stream answers a streaming request. The upstream is opened first; if it answers (or fails) within one heartbeat
// interval the client gets either the stream or a proper error status (the returned outcome, with a nil body).
// Otherwise the 200 headers go out and ": ping" comments keep the connection alive until it does; a failure then
// becomes a data: {"error":...} frame.
func (s *Server) stream(ctx context.Context, st *chatState) (outcome, streamBody) {
	g := st.ground
	if g.Answer != nil {
		src := newAnswerSource(s.chunkBuilder(st), g.Answer, st.req.N)
		return outcome{}, func(ctx context.Context, sw *sseWriter) outcome {
			return s.relay(ctx, sw, st, src, g, outcome{status: http.StatusOK, grounded: true})
		}
	}

	// Buffered, so the call's goroutine is free once the call returns (it ends with ctx) even when nobody
	// receives.
	ch := make(chan opened, 1)
	st.prepared = time.Since(st.start)
	s.callers.run(func() {
		stream, served, err := s.up.Stream(ctx, &st.call)
		ch <- opened{stream, served, err}
	})
	timer := time.NewTimer(s.cfg.Heartbeat)
	defer timer.Stop()
	select {
	case o := <-ch:
		s.observeUpstream(ctx, st, o.served, o.err)
		if o.err != nil {
			return outcome{status: compat.AsAPIError(o.err).Status, err: o.err, served: o.served}, nil
		}
		return outcome{}, func(ctx context.Context, sw *sseWriter) outcome {
			return s.relay(ctx, sw, st, o.stream, g, outcome{status: http.StatusOK, served: o.served})
		}
	case <-timer.C:
		return outcome{}, func(ctx context.Context, sw *sseWriter) outcome {
			_ = sw.ping() // commits the headers
			stop := sw.heartbeat(s.cfg.Heartbeat)
			o := <-ch
			stop()
			s.observeUpstream(ctx, st, o.served, o.err)
			out := outcome{status: http.StatusOK, served: o.served}
			if o.err != nil {
				s.streamError(sw, st, o.err)
				out.err = o.err
				return out
			}
			return s.relay(ctx, sw, st, o.stream, g, out)
		}
	}
}

// streamBody answers with an event stream that body writes on fasthttp's stream-writer goroutine, which finishes
// the request. A panic there would end the whole process, so it is recovered: logged, the client gets a
// server_error frame, and the request ends.
func (s *Server) streamBody(ctx context.Context, c *fiber.Ctx, st *chatState, body streamBody) {
	setSSEHeaders(c)
	var conn writeHolder // found here: c is the handler's, released once it returns
	if ln := s.listener.Load(); ln != nil {
		if sc := ln.conn(c.Context().RemoteAddr()); sc != nil {
			conn = sc
		}
	}
	c.Context().Response.SetBodyStream(&sseBody{writers: &s.sseWriters, write: func(w *bufio.Writer) {
		sw := newSSEWriter(w, st.cancel)
		sw.conn = conn
		var out outcome
		ctx, span := s.cfg.Tracing.Start(ctx, "stream")
		defer func() {
			span.SetAttributes(attribute.Bool("ragproxy.stream.completed", out.err == nil))
			span.End()
		}()
		defer func() {
			if r := recover(); r != nil {
				err := fmt.Errorf("stream panicked: %v", r)
				s.log.Error("stream panicked", "request_id", st.id, "err", err, "stack", string(debug.Stack()))
				s.streamError(sw, st, compat.ServerError(err))
				out = outcome{status: http.StatusOK, err: err}
			}
			s.finish(ctx, st, out)
		}()
		out = body(ctx, sw)
	}}, -1)
}

func setSSEHeaders(c *fiber.Ctx) {
	c.Status(http.StatusOK)
	c.Set(fiber.HeaderContentType, "text/event-stream; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderConnection, "keep-alive")
	// nginx buffers proxied responses unless told not to.
	c.Set("X-Accel-Buffering", "no")
}

// observeUpstream reports EventUpstream: the upstream call answered or failed.
func (s *Server) observeUpstream(ctx context.Context, st *chatState, served upstream.Served, err error) {
	ev := s.event(st, EventUpstream)
	ev.Upstream, ev.Attempts, ev.Err = served.Upstream, served.Attempts, err
	s.obs.Observe(ctx, ev)
}

// relay copies the source to the client, then the Grounding's extra events and [DONE]; it runs on fasthttp's
// stream-writer goroutine and returns out completed with how the stream ended.
func (s *Server) relay(ctx context.Context, sw *sseWriter, st *chatState, src chunkSource, g *Grounding, out outcome) outcome {
	defer src.Close()
	stop := sw.heartbeat(s.cfg.Heartbeat)
	defer stop()
	var filters filterTimer
	defer filters.record(ctx, s.cfg.Tracing)
	r := &relay{includeUsage: st.req.IncludeUsage, newFilter: s.timedFilters(g.NewFilter, &filters), events: g.Events,
		collect:      s.collect || st.cache != nil || s.cfg.Questions != nil && st.task == "",
		onFirstToken: func() { s.obs.Observe(ctx, s.event(st, EventFirstToken)) }}
	// The frames of chunks that are at hand together go out in one write: a flush only when the source would
	// wait for its next chunk, and at the end.
	ready, _ := src.(readySource)
	var err error
	for err == nil && src.Next() {
		err = r.chunk(src.Chunk(), sw.frame)
		if err == nil && (ready == nil || !ready.Ready()) {
			err = sw.flush()
		}
	}
	if err == nil {
		err = src.Err()
	}
	if err == nil {
		for _, e := range r.sentEvents() {
			if err = sw.frame(e); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = sw.end(frameDone)
	}
	out.usage, out.estimate = r.usage, r.contentBytes
	if err != nil {
		if werr := sw.failed(); werr != nil {
			err = werr
			out.clientGone = true
		} else if errors.Is(context.Cause(ctx), errClientGone) {
			out.clientGone = true // seen before any write failed
		} else if ctx.Err() != nil {
			// Not the client and not the upstream: a drain ran out of time.
			err = errors.Join(errCutOff, err)
			s.streamError(sw, st, compat.Unavailable("The server is shutting down."))
		} else {
			s.streamError(sw, st, err)
		}
	}
	out.err = err
	out.content = r.content.String()
	anns := r.answerAnnotations()
	if g.Answer != nil {
		anns = g.Answer.Annotations
	}
	out.id, out.cited = r.builder.ID, anns
	if err == nil && st.cache != nil && r.finished && !r.special {
		out.answer = &cachedAnswer{Model: r.builder.Model, Content: r.content.String(), FinishReason: r.finishReason,
			Annotations: anns, Usage: r.usage, Events: r.sentEvents(), Question: g.Question}
	}
	return out
}

// errCutOff marks a stream ended by a drain that ran out of time.
var errCutOff = errors.New("stream cut off by shutdown")

// streamError sends an error after the headers went out: one
// data: {"error":{...}} frame, and the stream ends without [DONE], as
// OpenAI does.
func (s *Server) streamError(sw *sseWriter, st *chatState, err error) {
	ae := compat.AsAPIError(err)
	s.log.Warn("stream failed", "request_id", st.id, "err", err)
	frame := make([]byte, 0, 128)
	frame = append(frame, `{"error":`...)
	frame = append(frame, ae.Object()...)
	frame = append(frame, '}')
	_ = sw.data(frame)
}
