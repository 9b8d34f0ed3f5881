package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ragproxy/ragproxy/compat"
)

// chatState is one chat request on its way through the proxy.
type chatState struct {
	id      string
	start   time.Time
	req     *compat.ChatRequest
	ground  *Grounding
	call    compat.Call
	ctx     context.Context
	cancel  func()
	untrack func()
	task    string
	// prepared is the time from arrival to the upstream call's start.
	prepared time.Duration
	// cache is the response cache's part in this request, nil when none.
	cache *cacheState
	// answer is the complete answer as sent, once there is one the response
	// cache may keep.
	answer *cachedAnswer
	// ended is set once end ran.
	ended bool
	// limitKey names the client in the rate limits ("" without limits).
	limitKey string
	// stopWatch ends the watch for the client leaving (see watchClient).
	stopWatch func()
}

// observeUsage reports an answer's usage and counts its tokens against the client's limits (not for an answer
// replayed from the cache, which cost no upstream tokens).
func (s *Server) observeUsage(st *chatState, u compat.Usage) {
	ev := s.event(st, EventUsage)
	ev.Usage = u
	s.obs.Observe(st.ctx, ev)
	if st.cache == nil || !st.cache.served {
		s.charge(st.ctx, st.limitKey, u.CompletionTokens)
	}
}

// chargeEstimate counts an answer whose upstream reported no usage against the client's token limit, at the
// prompt estimate's four bytes a token, so an upstream without usage reporting does not make answers free.
func (s *Server) chargeEstimate(st *chatState, contentBytes int) {
	if st.cache == nil || !st.cache.served {
		s.charge(st.ctx, st.limitKey, (contentBytes+3)/4)
	}
}

func (s *Server) event(st *chatState, kind EventKind) Event {
	return Event{Kind: kind, RequestID: st.id, Model: st.req.Model, Stream: st.req.Stream, Elapsed: time.Since(st.start),
		Task: st.task, Prepared: st.prepared}
}

// end releases the request and reports EventEnd.
func (s *Server) end(st *chatState, ev Event) {
	st.ended = true
	if st.stopWatch != nil {
		st.stopWatch()
	}
	ev.Kind, ev.RequestID, ev.Model, ev.Stream = EventEnd, st.id, st.req.Model, st.req.Stream
	ev.Elapsed, ev.Task, ev.Prepared = time.Since(st.start), st.task, st.prepared
	if ev.Cache == "" && st.cache != nil {
		ev.Cache = st.cache.result
	}
	s.cache.finish(st, ev)
	s.obs.Observe(st.ctx, ev)
	st.cancel()
	st.untrack()
}

// largeBody is the body size from which requests are decoded one at a time (see takeLarge).
const largeBody = 1 << 20

// takeLarge admits a request whose body is largeBody or more to decoding and grounding, one at a time: megabytes
// of JSON take a core for a while, and clients sending them back to back must not take every core from the
// others. The slot stays taken after the work for twice as long as the work took, so that such requests use at
// most a third of one core however fast they come. The returned release is called before the upstream call
// (which may take long but costs the proxy little); calling it again does nothing.
func (s *Server) takeLarge(body []byte) (release func()) {
	if len(body) < largeBody {
		return func() {}
	}
	s.large <- struct{}{}
	start := time.Now()
	var once sync.Once
	return func() {
		once.Do(func() {
			pause := 2 * time.Since(start)
			go func() { time.Sleep(pause); <-s.large }()
		})
	}
}

func (s *Server) chat(c *fiber.Ctx) error {
	body := c.Body()
	release := s.takeLarge(body)
	defer release()
	req, err := compat.DecodeChatRequest(body)
	if err != nil {
		return err
	}
	if s.draining.Load() {
		return compat.Unavailable("The server is shutting down.")
	}
	limitKey := ""
	if s.cfg.RateLimits.enabled() {
		limitKey = clientKey(c)
		if err := s.admit(context.Background(), c, limitKey); err != nil {
			return err
		}
	}
	// The request's own context: fasthttp's RequestCtx ends at shutdown and
	// never on client disconnect, so neither fits. This one ends when the
	// client goes away (watchClient, or a failed write, notices), when the
	// request is done, or when a drain runs out of time.
	id := requestID(c)
	header := requestHeader(c)
	locals := &chatLocals{stream: req.Stream, task: TaskKind(header, req.Messages)}
	c.Locals(localChat, locals)
	ctx, cancelCause := context.WithCancelCause(context.WithValue(context.Background(), requestIDKey{}, id))
	cancel := func() { cancelCause(nil) }
	st := &chatState{id: id, start: requestStart(c), req: req, ctx: ctx, cancel: cancel, untrack: s.track(cancel),
		task: locals.task, limitKey: limitKey}
	s.obs.Observe(ctx, s.event(st, EventStart))
	locals.observed = true
	st.stopWatch = watchClient(c, func() { cancelCause(errClientGone) })
	defer func() {
		// A panic below is answered by the recover middleware; the request still ends here, so it is not left
		// in flight.
		if r := recover(); r != nil {
			if !st.ended {
				s.end(st, Event{Status: http.StatusInternalServerError, Err: fmt.Errorf("handler panicked: %v", r)})
			}
			panic(r)
		}
	}()

	if s.cache != nil {
		if served, err := s.cache.serve(c, s, st, header); served {
			return err
		}
	}
	if s.cfg.Grounder != nil {
		gr := &GroundRequest{Model: req.Model, Stream: req.Stream, Messages: req.Messages, Request: req,
			Header: header, Task: st.task}
		gr.TaskHeading, gr.TaskPrompts = classifyPrompts(req.Messages)
		g, err := s.cfg.Grounder.Ground(ctx, gr)
		if err != nil {
			s.end(st, Event{Status: compat.AsAPIError(err).Status, Err: err})
			return err
		}
		st.ground = g
	}
	if st.ground == nil {
		st.ground = &Grounding{}
	}
	st.call = compat.Call{Request: req, Model: s.upstreamModel(req.Model)}
	if len(st.ground.Messages) > 0 {
		msgs, err := compat.MessagesJSON(st.ground.Messages)
		if err != nil {
			s.end(st, Event{Status: http.StatusInternalServerError, Err: err})
			return err
		}
		st.call.Messages = msgs
	}
	release()
	if req.Stream {
		return s.stream(c, st)
	}
	return s.complete(c, st)
}

// upstreamModel maps the client's model to the one asked upstream: an alias
// becomes its upstream model ("" = the upstream's default), anything else is
// forwarded as sent.
func (s *Server) upstreamModel(model string) string {
	if a, ok := s.aliases[model]; ok {
		return a.Upstream
	}
	return model
}

// responseModel is the model named in answers the proxy writes itself.
func (s *Server) responseModel(model string) string {
	if model != "" {
		return model
	}
	return s.cfg.Models[0].ID
}

func requestHeader(c *fiber.Ctx) http.Header {
	h := http.Header{}
	for k, v := range c.Request().Header.All() {
		h.Add(string(k), string(v))
	}
	return h
}

// complete answers a non-stream request.
func (s *Server) complete(c *fiber.Ctx, st *chatState) error {
	g := st.ground
	var body []byte
	ev := Event{Status: http.StatusOK}
	if g.Answer != nil {
		b := compat.ChunkBuilder{ID: "chatcmpl-" + st.id[len("req_"):], Model: s.responseModel(st.req.Model), Created: st.start.Unix()}
		body = b.CompletionN(g.Answer.Text, st.req.N, g.Answer.usage(st.req.N), g.Answer.Annotations)
		ev.Grounded = true
	} else {
		var served compat.Served
		var err error
		st.prepared = time.Since(st.start)
		body, served, err = s.up.Complete(st.ctx, &st.call)
		ev.Upstream, ev.Attempts = served.Upstream, served.Attempts
		up := s.event(st, EventUpstream)
		up.Upstream, up.Attempts, up.Err = served.Upstream, served.Attempts, err
		s.obs.Observe(st.ctx, up)
		if err != nil {
			ev.Status, ev.Err = compat.AsAPIError(err).Status, err
			if errors.Is(context.Cause(st.ctx), errClientGone) {
				ev.ClientGone, ev.Err = true, errors.Join(errClientGone, err)
			}
			s.end(st, ev)
			return err
		}
	}
	info, err := compat.ParseCompletion(body)
	if err != nil {
		err = compat.UpstreamUnreachable(ev.Upstream, err)
		ev.Status, ev.Err = http.StatusBadGateway, err
		s.end(st, ev)
		return err
	}
	var text string // the first answer's
	if len(info.Choices) > 0 {
		text = info.Choices[0].Content
	}
	var annotations []compat.Annotation // the first answer's
	if g.NewFilter != nil {
		// Each answer (n of them when the request asks for n > 1) is filtered on its own and carries its own
		// annotations. An answer without text (a tool call) is left as it is.
		for pos, ch := range info.Choices {
			if !ch.HasContent {
				continue
			}
			f := g.NewFilter()
			t := f.Filter(ch.Content) + f.Trailer()
			anns, _ := citations(f)
			if pos == 0 {
				text, annotations = t, anns
			}
			if body, err = compat.SetMessageContent(body, pos, t); err == nil && len(anns) > 0 {
				body, err = compat.SetMessageAnnotations(body, pos, anns)
			}
			if err != nil {
				ev.Status, ev.Err = http.StatusInternalServerError, err
				s.end(st, ev)
				return err
			}
		}
	}
	if info.Usage != nil {
		s.observeUsage(st, *info.Usage)
	} else {
		n := 0
		for _, ch := range info.Choices {
			n += len(ch.Content)
		}
		s.chargeEstimate(st, n)
	}
	if s.collect {
		ev.Content = text
	}
	if st.cache != nil {
		if g.Answer != nil {
			annotations = g.Answer.Annotations
		}
		st.answer = completionAnswer(body, text, annotations, info.Usage)
	}
	s.end(st, ev)
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Status(http.StatusOK).Send(body)
}
