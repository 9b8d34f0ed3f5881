package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/gofiber/fiber/v2"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/upstream"
)

// A chat request has one life: chat opens it (its context, EventStart, the watch for the client leaving), answer
// answers it, and finish, deferred where the request ends, records how it ended and releases it. complete,
// stream and replay each return an outcome; a stream's is returned by its body, which fasthttp writes after the
// handler returned, so a stream is finished there.

// chatState is one chat request on its way through the proxy. Its context is not kept here: every step takes it
// as its first parameter.
type chatState struct {
	id     string
	start  time.Time
	req    *compat.ChatRequest
	header http.Header
	ground *Grounding
	call   upstream.Call
	// cancel ends the request's context; untrack removes it from the requests a drain cuts off.
	cancel  func()
	untrack func()
	task    string
	// prepared is the time from arrival to the upstream call's start.
	prepared time.Duration
	// cache is the response cache's part in this request, nil when none.
	cache *cacheState
	// limitKey names the client in the rate limits ("" without limits).
	limitKey string
	// stopWatch ends the watch for the client leaving (see watchClient).
	stopWatch func()
}

// outcome is how a chat request ended: what finish records.
type outcome struct {
	// status is the HTTP status the client got (200 for a stream that failed after its headers went out, with
	// err set). err is what ended the request; for a response not yet written it is also what the client gets.
	status int
	err    error
	// clientGone reports that the client left before its answer was complete.
	clientGone bool
	// served names the upstream that answered and lists every attempt; grounded reports an answer the
	// Grounder wrote, with no upstream call.
	served   upstream.Served
	grounded bool
	// usage is the answer's usage when it reported one; estimate is the answers' text in bytes, which the
	// rate limits charge when it did not.
	usage    *compat.Usage
	estimate int
	// content is the first answer's text as sent; answer is the record the response cache may keep (nil
	// when there is none).
	content string
	answer  *cachedAnswer
	// id is the chat completion's id as the client got it, cited the first answer's annotations, and question
	// the Grounder's report of the question, for the question log (from the cache for a replayed answer).
	id       string
	cited    []compat.Annotation
	question *QuestionReport
}

// streamBody writes a stream's frames once its headers went out, and returns the request's outcome.
type streamBody func(ctx context.Context, sw *sseWriter) outcome

func (s *Server) event(st *chatState, kind EventKind) Event {
	return Event{Kind: kind, RequestID: st.id, Model: st.req.Model, Stream: st.req.Stream, Elapsed: time.Since(st.start),
		Task: st.task, Prepared: st.prepared}
}

// open starts the request's life and returns its own context: fasthttp's RequestCtx ends at shutdown and never
// on client disconnect, so it does not fit. This one ends when the client goes away (watchClient, or a failed
// write, notices), when the request is finished, or when a drain runs out of time.
func (s *Server) open(ctx context.Context, c *fiber.Ctx, req *compat.ChatRequest, limitKey string) (context.Context, *chatState) {
	header := requestHeader(c)
	locals := &chatLocals{stream: req.Stream, task: TaskKind(header, req.Messages)}
	c.Locals(localChat, locals)
	ctx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(nil) }
	st := &chatState{id: requestID(c), start: requestStart(c), req: req, header: header, cancel: cancel,
		untrack: s.track(cancel), task: locals.task, limitKey: limitKey}
	s.obs.Observe(ctx, s.event(st, EventStart))
	locals.observed = true
	st.stopWatch = watchClient(c, func() { cancelCause(errClientGone) })
	return ctx, st
}

// finish records how the request ended and releases it: the answer's usage (EventUsage) and its tokens charged
// against the client (not for an answer replayed from the cache, which cost no upstream tokens), the answer
// handed to the response cache, EventEnd. It runs once per request, where the request ends: deferred in the
// handler, or on the stream writer for a stream whose headers went out.
func (s *Server) finish(ctx context.Context, st *chatState, out outcome) {
	if out.usage != nil {
		ev := s.event(st, EventUsage)
		ev.Usage = *out.usage
		s.obs.Observe(ctx, ev)
	}
	if st.cache == nil || !st.cache.served {
		tokens := (out.estimate + 3) / 4 // the prompt estimate's four bytes a token, so no usage is not free
		if out.usage != nil {
			tokens = out.usage.CompletionTokens
		}
		s.charge(ctx, st.limitKey, tokens)
	}
	st.stopWatch()
	ev := s.event(st, EventEnd)
	ev.Status, ev.Err, ev.ClientGone = out.status, out.err, out.clientGone
	if out.clientGone && !errors.Is(ev.Err, errClientGone) {
		ev.Err = errors.Join(errClientGone, out.err) // the cancelled call's error, from the client leaving
	}
	ev.Upstream, ev.Attempts, ev.Grounded = out.served.Upstream, out.served.Attempts, out.grounded
	if s.collect {
		ev.Content = out.content
	}
	if st.cache != nil {
		ev.Cache = st.cache.result
		answer := out.answer
		if ev.Err != nil || ev.Status != http.StatusOK || st.ground != nil && st.ground.NoStore {
			answer = nil
		}
		s.cache.finish(ctx, st.cache, answer)
	}
	s.logQuestion(ctx, st, out) // before EventEnd: a request observed ended has had its question logged
	s.obs.Observe(ctx, ev)
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
			// A timer, not a sleeping goroutine, gives the slot back: nothing waits, and the slot is
			// this request's to free, so the receive never blocks.
			time.AfterFunc(2*time.Since(start), func() { <-s.large })
		})
	}
}

// admitChat admits a chat request, under a span of its own: a large body waits for its turn (takeLarge), the
// body is decoded, and the client's rate limits are checked (limitKey is the key they count under, "" without
// limits). release is takeLarge's, to be called also on an error.
func (s *Server) admitChat(ctx context.Context, c *fiber.Ctx, body []byte) (req *compat.ChatRequest, limitKey string, release func(), err error) {
	ctx, span := s.cfg.Tracing.Start(ctx, "admission")
	defer func() {
		span.SetAttributes(attribute.Bool("ragproxy.admitted", err == nil))
		span.End()
	}()
	release = s.takeLarge(body)
	if req, err = compat.DecodeChatRequest(body); err != nil {
		return nil, "", release, err
	}
	if s.draining.Load() {
		return nil, "", release, compat.Unavailable("The server is shutting down.")
	}
	if s.cfg.RateLimits.enabled() {
		limitKey = s.clientKey(c)
		if err := s.admit(ctx, c, limitKey); err != nil {
			return nil, "", release, err
		}
	}
	return req, limitKey, release, nil
}

func (s *Server) chat(c *fiber.Ctx) error {
	ctx := c.UserContext()
	body := c.Body()
	req, limitKey, release, err := s.admitChat(ctx, c, body)
	defer release()
	if err != nil {
		return err
	}
	ctx, st := s.open(ctx, c, req, limitKey)
	var out outcome
	streamed := false // the stream's body finishes the request
	defer func() {
		// A panic below is answered by the recover middleware; the request still ends here, so it is not left
		// in flight.
		r := recover()
		if r != nil {
			out = outcome{status: http.StatusInternalServerError, err: fmt.Errorf("handler panicked: %v", r)}
		}
		if !streamed {
			s.finish(ctx, st, out)
		}
		if r != nil {
			panic(r)
		}
	}()
	out, sb := s.answer(ctx, c, st, release)
	if sb != nil {
		streamed = true
		s.streamBody(ctx, c, st, sb)
		return nil
	}
	return out.err
}

// answer answers the request: from the response cache, with the Grounder's answer, or from upstream. An answer
// given at once returns its outcome and a nil body; a stream returns the body that writes it.
func (s *Server) answer(ctx context.Context, c *fiber.Ctx, st *chatState, release func()) (outcome, streamBody) {
	if s.cache != nil {
		cctx, span := s.cfg.Tracing.Start(ctx, "cache lookup")
		cs, a, err := s.cache.lookup(cctx, st.req, st.task, st.header)
		span.SetAttributes(attribute.Bool("ragproxy.cache.hit", a != nil))
		span.End()
		st.cache = cs
		switch {
		case err != nil:
			return waitEnded(ctx, err), nil
		case a != nil:
			return s.replay(c, st, a)
		case cs != nil && cs.write:
			c.Set(headerXCache, "MISS") // this answer will be stored
		}
	}
	if s.cfg.Grounder != nil {
		gr := &GroundRequest{Model: st.req.Model, Stream: st.req.Stream, Messages: st.req.Messages, Request: st.req,
			Header: st.header, Task: st.task}
		gr.TaskHeading, gr.TaskPrompts = classifyPrompts(st.req.Messages)
		gctx, span := s.cfg.Tracing.Start(ctx, "ground")
		g, err := s.cfg.Grounder.Ground(gctx, gr)
		span.End()
		if err != nil {
			return outcome{status: compat.AsAPIError(err).Status, err: err}, nil
		}
		st.ground = g
	}
	if st.ground == nil {
		st.ground = &Grounding{}
	}
	st.call = upstream.Call{Request: st.req, Model: s.upstreamModel(st.req.Model)}
	if len(st.ground.Messages) > 0 {
		msgs, err := compat.MessagesJSON(st.ground.Messages)
		if err != nil {
			return outcome{status: http.StatusInternalServerError, err: err}, nil
		}
		st.call.Messages = msgs
	}
	release()
	if st.req.Stream {
		return s.stream(ctx, st)
	}
	return s.complete(ctx, c, st), nil
}

// waitEnded is the outcome of a request whose context ended while it waited for a concurrent identical request's
// answer: its client left, recorded as any request whose client left, or a drain ran out of time.
func waitEnded(ctx context.Context, err error) outcome {
	if errors.Is(context.Cause(ctx), errClientGone) {
		return outcome{status: compat.AsAPIError(err).Status, err: err, clientGone: true}
	}
	ae := compat.Unavailable("The server is shutting down.")
	return outcome{status: ae.Status, err: ae}
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

// chunkBuilder writes the chunks of an answer the proxy writes itself, under the request's id.
func (s *Server) chunkBuilder(st *chatState) compat.ChunkBuilder {
	return compat.ChunkBuilder{ID: "chatcmpl-" + st.id[len("req_"):], Model: s.responseModel(st.req.Model), Created: st.start.Unix()}
}

func requestHeader(c *fiber.Ctx) http.Header {
	// The headers' text is copied once, into one string that keys and values slice, and the values' slices share
	// one array: four allocations in all rather than three for each header.
	rh := &c.Request().Header
	n, size := 0, 0
	for k, v := range rh.All() {
		n, size = n+1, size+len(k)+len(v)
	}
	var text strings.Builder
	text.Grow(size)
	for k, v := range rh.All() {
		text.Write(k)
		text.Write(v)
	}
	all := text.String()
	h := make(http.Header, n)
	values := make([]string, n)
	i, at := 0, 0
	for k, v := range rh.All() {
		key := http.CanonicalHeaderKey(all[at : at+len(k)]) // no copy: fasthttp has made most keys canonical
		at += len(k)
		values[i] = all[at : at+len(v)]
		at += len(v)
		if prev := h[key]; prev != nil {
			h[key] = append(prev, values[i])
		} else {
			h[key] = values[i : i+1 : i+1]
		}
		i++
	}
	return h
}

// complete answers a non-stream request.
func (s *Server) complete(ctx context.Context, c *fiber.Ctx, st *chatState) outcome {
	g := st.ground
	var body []byte
	out := outcome{status: http.StatusOK}
	if g.Answer != nil {
		body = s.chunkBuilder(st).CompletionN(g.Answer.Text, st.req.N, g.Answer.usage(st.req.N), g.Answer.Annotations)
		out.grounded = true
	} else {
		var err error
		st.prepared = time.Since(st.start)
		body, out.served, err = s.up.Complete(ctx, &st.call)
		s.observeUpstream(ctx, st, out.served, err)
		if err != nil {
			out.status, out.err = compat.AsAPIError(err).Status, err
			out.clientGone = errors.Is(context.Cause(ctx), errClientGone)
			return out
		}
	}
	info, err := compat.ParseCompletion(body)
	if err != nil {
		out.status, out.err = http.StatusBadGateway, compat.UpstreamUnreachable(out.served.Upstream, err)
		return out
	}
	var filters filterTimer
	fg := g
	if s.cfg.Tracing != nil {
		timed := *g
		timed.NewFilter = s.timedFilters(g.NewFilter, &filters)
		fg = &timed
	}
	body, text, annotations, events, err := filterChoices(fg, body, info)
	filters.record(ctx, s.cfg.Tracing)
	if err != nil {
		out.status, out.err = http.StatusInternalServerError, err
		return out
	}
	if events == nil {
		events = g.Events
	}
	body = withOpenWebUISources(body, st.header, events)
	out.usage = info.Usage
	if info.Usage == nil {
		for _, ch := range info.Choices {
			out.estimate += len(ch.Content)
		}
	}
	out.content = text
	if g.Answer != nil {
		annotations = g.Answer.Annotations
	}
	out.id, out.cited = info.ID, annotations
	if st.cache != nil {
		if out.answer = completionAnswer(body, text, annotations, info.Usage); out.answer != nil {
			out.answer.Events, out.answer.Question = events, g.Question
		}
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	_ = c.Status(http.StatusOK).Send(body) // fiber's Send only sets the body: its error is always nil
	return out
}

// filterChoices runs the Grounding's content filter over each answer of a completion (n of them when the
// request asks for n > 1), each on its own and with its own annotations; an answer without text (a tool call)
// is left as it is. It returns the body as sent and the first answer's text, annotations and the source events
// its filter reported (nil when none did).
func filterChoices(g *Grounding, body []byte, info compat.CompletionInfo) ([]byte, string, []compat.Annotation, []json.RawMessage, error) {
	var text string // the first answer's
	if len(info.Choices) > 0 {
		text = info.Choices[0].Content
	}
	if g.NewFilter == nil {
		return body, text, nil, nil, nil
	}
	var annotations []compat.Annotation // the first answer's
	var events []json.RawMessage
	for pos, ch := range info.Choices {
		if !ch.HasContent {
			continue
		}
		f := g.NewFilter()
		t := f.Filter(ch.Content) + f.Trailer()
		anns, evs := citations(f)
		if pos == 0 {
			text, annotations, events = t, anns, evs
		}
		var err error
		if body, err = compat.SetMessageContent(body, pos, t); err == nil && len(anns) > 0 {
			body, err = compat.SetMessageAnnotations(body, pos, anns)
		}
		if err != nil {
			return nil, "", nil, nil, err
		}
	}
	return body, text, annotations, events, nil
}
