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

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/upstream"
)

type opened struct {
	stream *upstream.Stream
	served upstream.Served
	err    error
}

// stream answers a streaming request. The upstream is opened first; if it
// answers (or fails) within one heartbeat interval the client gets either
// the stream or a proper error status. Otherwise the 200 headers go out and
// ": ping" comments keep the connection alive until it does; a failure then
// becomes a data: {"error":...} frame.
func (s *Server) stream(c *fiber.Ctx, st *chatState) error {
	g := st.ground
	if g.Answer != nil {
		b := compat.ChunkBuilder{ID: "chatcmpl-" + st.id[len("req_"):], Model: s.responseModel(st.req.Model), Created: st.start.Unix()}
		src := newAnswerSource(b, g.Answer, st.req.N)
		s.streamBody(c, st, func(sw *sseWriter) {
			s.relay(sw, st, src, Event{Status: http.StatusOK, Grounded: true})
		})
		return nil
	}

	ch := make(chan opened, 1)
	st.prepared = time.Since(st.start)
	go func() {
		stream, served, err := s.up.Stream(st.ctx, &st.call)
		ch <- opened{stream, served, err}
	}()
	timer := time.NewTimer(s.cfg.Heartbeat)
	select {
	case o := <-ch:
		timer.Stop()
		s.observeUpstream(st, o)
		if o.err != nil {
			s.end(st, Event{Upstream: o.served.Upstream, Attempts: o.served.Attempts, Status: compat.AsAPIError(o.err).Status, Err: o.err})
			return o.err
		}
		s.streamBody(c, st, func(sw *sseWriter) {
			s.relay(sw, st, o.stream, Event{Status: http.StatusOK, Upstream: o.served.Upstream, Attempts: o.served.Attempts})
		})
	case <-timer.C:
		s.streamBody(c, st, func(sw *sseWriter) {
			_ = sw.ping() // commits the headers
			stop := sw.heartbeat(s.cfg.Heartbeat)
			o := <-ch
			stop()
			s.observeUpstream(st, o)
			ev := Event{Status: http.StatusOK, Upstream: o.served.Upstream, Attempts: o.served.Attempts}
			if o.err != nil {
				s.streamError(sw, st, o.err)
				ev.Err = o.err
				s.end(st, ev)
				return
			}
			s.relay(sw, st, o.stream, ev)
		})
	}
	return nil
}

// streamBody answers with an event stream that write produces on fasthttp's stream-writer goroutine. A panic
// there would end the whole process, so it is recovered: logged, the client gets a server_error frame, and the
// request ends.
func (s *Server) streamBody(c *fiber.Ctx, st *chatState, write func(sw *sseWriter)) {
	setSSEHeaders(c)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		sw := newSSEWriter(w, st.cancel)
		defer func() {
			if r := recover(); r != nil {
				err := fmt.Errorf("stream panicked: %v", r)
				s.log.Error("stream panicked", "request_id", st.id, "err", err, "stack", string(debug.Stack()))
				s.streamError(sw, st, compat.ServerError(err))
				if !st.ended {
					s.end(st, Event{Status: http.StatusOK, Err: err})
				}
			}
		}()
		write(sw)
	})
}

func setSSEHeaders(c *fiber.Ctx) {
	c.Status(http.StatusOK)
	c.Set(fiber.HeaderContentType, "text/event-stream; charset=utf-8")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderConnection, "keep-alive")
	// nginx buffers proxied responses unless told not to.
	c.Set("X-Accel-Buffering", "no")
}

func (s *Server) observeUpstream(st *chatState, o opened) {
	ev := s.event(st, EventUpstream)
	ev.Upstream, ev.Attempts, ev.Err = o.served.Upstream, o.served.Attempts, o.err
	s.obs.Observe(st.ctx, ev)
}

// relay copies the source to the client, then the Grounder's extra events
// and [DONE]; it runs on fasthttp's stream-writer goroutine and owns the
// end of the request.
func (s *Server) relay(sw *sseWriter, st *chatState, src chunkSource, ev Event) {
	defer src.Close()
	stop := sw.heartbeat(s.cfg.Heartbeat)
	defer stop()
	g := st.ground
	r := &relay{includeUsage: st.req.IncludeUsage, newFilter: g.NewFilter, events: g.Events, collect: s.collect || st.cache != nil,
		onFirstToken: func() { s.obs.Observe(st.ctx, s.event(st, EventFirstToken)) }}
	var err error
	for err == nil && src.Next() {
		err = r.chunk(src.Chunk(), sw.data)
	}
	if err == nil {
		err = src.Err()
	}
	if err == nil {
		for _, e := range r.sentEvents() {
			if err = sw.data(e); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = sw.raw(frameDone)
	}
	if r.usage != nil {
		s.observeUsage(st, *r.usage)
	} else {
		s.chargeEstimate(st, r.contentBytes)
	}
	if err != nil {
		if werr := sw.failed(); werr != nil {
			err = werr
			ev.ClientGone = true
		} else if errors.Is(context.Cause(st.ctx), errClientGone) {
			err = errors.Join(errClientGone, err) // seen before any write failed
			ev.ClientGone = true
		} else if st.ctx.Err() != nil {
			// Not the client and not the upstream: a drain ran out of time.
			err = errors.Join(errCutOff, err)
			s.streamError(sw, st, compat.Unavailable("The server is shutting down."))
		} else {
			s.streamError(sw, st, err)
		}
	}
	ev.Err = err
	if s.collect {
		ev.Content = r.content.String()
	}
	if err == nil && st.cache != nil && r.finished && !r.special {
		anns := r.answerAnnotations()
		if g.Answer != nil {
			anns = g.Answer.Annotations
		}
		st.answer = &cachedAnswer{Model: r.builder.Model, Content: r.content.String(), FinishReason: r.finishReason,
			Annotations: anns, Usage: r.usage, Events: r.sentEvents()}
	}
	s.end(st, ev)
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
