package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/tidwall/gjson"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/compat"
)

// The response cache answers a repeated deterministic request from the
// answer the proxy sent the first time, without retrieval or an upstream
// call. Only requests whose answer is a function of the request are kept:
// temperature 0 (or the X-Ragproxy-Cache: on opt-in), a single choice, text
// inputs only, and answers that finished with "stop" and carry only text.
// The key covers everything that shapes the answer: the model, every body
// field but the transport ones, the task and the headers the Grounder looks
// at (Varier), the retrieval settings, the index version and the
// prompt version. One stored record is replayed as a stream or as JSON,
// whichever the client asked for, with x-cache: HIT.
//
// Concurrent identical misses make one upstream call (cache.Group): the
// first request goes upstream and streams live to its client; the others
// wait for its answer and replay it.

const (
	headerXCache     = "X-Cache"
	headerCacheOptIn = "X-Ragproxy-Cache"
	// defaultCacheTTL is Config.CacheTTL's default.
	defaultCacheTTL = time.Hour
	// cacheKeyVersion changes whenever the key's parts or the record's
	// shape do, so older entries are never misread.
	cacheKeyVersion = "ragproxy-response-v2"
)

// keyExcludedFields are body fields that do not change the answer: how it is
// delivered (stream, stream_options) and who asked (user, metadata, ...).
func keyExcludedFields() map[string]bool {
	return map[string]bool{"model": true, "stream": true, "stream_options": true, "user": true, "metadata": true,
		"store": true, "safety_identifier": true, "prompt_cache_key": true, "service_tier": true}
}

// cachedAnswer is the stored record of one answer, exactly as the client got
// it (after the content filter, with the annotations and events of the pages
// it cited).
type cachedAnswer struct {
	Model        string              `json:"model"`
	Content      string              `json:"content"`
	FinishReason string              `json:"finish_reason"`
	Annotations  []compat.Annotation `json:"annotations,omitempty"`
	Usage        *compat.Usage       `json:"usage,omitempty"`
	Events       []json.RawMessage   `json:"events,omitempty"`
}

// storable reports whether a will be the same answer next time.
func (a *cachedAnswer) storable() bool { return a != nil && a.FinishReason == "stop" }

// cacheState is the response cache's part in one request.
type cacheState struct {
	key   string
	read  bool
	write bool
	// result is "hit" or "miss" once looked up.
	result string
	// handoff, when set, makes this request the one computing the answer
	// for concurrent identical requests: end sends the answer (or nil) there
	// exactly once. settled is closed once the Group is done with it (the
	// answer stored if it can be, waiting requests answered).
	handoff chan *cachedAnswer
	settled chan struct{}
	// served reports an answer replayed from the cache.
	served bool
}

// responseCache is the server's response cache; nil when Config.Cache is nil.
type responseCache struct {
	group    *cache.Group
	excluded map[string]bool
	settings string
	prompt   string
}

func newResponseCache(cfg Config) *responseCache {
	if cfg.Cache == nil {
		return nil
	}
	ttl := cfg.CacheTTL
	if ttl <= 0 {
		ttl = defaultCacheTTL
	}
	return &responseCache{group: &cache.Group{Cache: cfg.Cache, TTL: ttl}, excluded: keyExcludedFields(),
		settings: cfg.RetrievalSettings, prompt: cfg.PromptVersion}
}

// errNotShared tells requests waiting on a concurrent identical request that
// its answer cannot be replayed; each then asks upstream itself.
var errNotShared = errors.New("response cache: answer not shareable")

// serve looks the request up. served is true when the request was answered
// here (a hit, or an error while waiting); otherwise the request goes on its
// usual way, with st.cache telling end what to store.
func (rc *responseCache) serve(c *fiber.Ctx, s *Server, st *chatState, header http.Header) (served bool, err error) {
	st.cache = rc.policy(s, st, header)
	if st.cache == nil {
		return false, nil
	}
	cs := st.cache
	switch {
	case cs.read && cs.write:
		return rc.flight(c, s, st)
	case cs.read: // no-store: a lookup only
		val, ok, _ := rc.group.Cache.Get(st.ctx, cs.key)
		if a := decodeAnswer(val, ok); a != nil {
			cs.result = "hit"
			return true, rc.replay(c, s, st, a)
		}
		cs.result = "miss"
	}
	if cs.write {
		c.Set(headerXCache, "MISS") // this answer will be stored
	}
	return false, nil
}

// flight runs the lookup through the Group: on a miss this request either
// leads (goes upstream, and end hands its answer over) or waits for the
// leader's answer and replays it.
func (rc *responseCache) flight(c *fiber.Ctx, s *Server, st *chatState) (bool, error) {
	cs := st.cache
	led := make(chan struct{})
	handoff := make(chan *cachedAnswer, 1)
	type done struct {
		val     []byte
		outcome cache.Outcome
		err     error
	}
	// Buffered, so the goroutine ends once the Group returns even when this
	// request no longer listens (it became the leader).
	resc := make(chan done, 1)
	settled := make(chan struct{})
	go func() {
		defer close(settled)
		val, outcome, err := rc.group.Do(st.ctx, cs.key, func(context.Context) ([]byte, bool, error) {
			close(led)
			a := <-handoff // end sends exactly once
			if a == nil || a.FinishReason != "stop" {
				return nil, false, errNotShared
			}
			b, err := json.Marshal(a)
			if err != nil {
				return nil, false, errNotShared
			}
			return b, true, nil
		})
		resc <- done{val, outcome, err}
	}()
	select {
	case <-led:
		cs.handoff, cs.settled, cs.result = handoff, settled, "miss"
		c.Set(headerXCache, "MISS")
		return false, nil
	case r := <-resc:
		if r.err != nil {
			if st.ctx.Err() != nil {
				err := compat.Unavailable("The server is shutting down.")
				s.end(st, Event{Status: err.Status, Err: err})
				return true, err
			}
			// The leader's answer could not be shared: answer this one
			// uncached, as if there were no cache.
			st.cache = nil
			return false, nil
		}
		a := decodeAnswer(r.val, true)
		if a == nil {
			st.cache = nil
			return false, nil
		}
		cs.result = "hit" // Shared counts as a hit: no upstream call of its own
		return true, rc.replay(c, s, st, a)
	}
}

// finish runs as the request ends: it hands the answer to waiting identical
// requests, or stores it.
func (rc *responseCache) finish(st *chatState, ev Event) {
	cs := st.cache
	if rc == nil || cs == nil || cs.served {
		return
	}
	a := st.answer
	if ev.Err != nil || ev.Status != http.StatusOK {
		a = nil
	}
	if cs.handoff != nil {
		cs.handoff <- a // buffered; the Group stores a storable answer
		cs.handoff = nil
		// The response goes out once the flight is over, as it does after a plain store below: a request that
		// follows it finds the answer stored, or no flight to join.
		<-cs.settled
		return
	}
	if cs.write && a.storable() {
		if b, err := json.Marshal(a); err == nil {
			_ = rc.group.Cache.Set(st.ctx, cs.key, b, rc.group.TTL) // see Config.Cache: wrap in a Tolerant
		}
	}
}

func decodeAnswer(val []byte, ok bool) *cachedAnswer {
	if !ok {
		return nil
	}
	var a cachedAnswer
	if json.Unmarshal(val, &a) != nil || !a.storable() {
		return nil
	}
	return &a
}

// replay answers the request from a, as a stream or as JSON.
func (rc *responseCache) replay(c *fiber.Ctx, s *Server, st *chatState, a *cachedAnswer) error {
	st.cache.served = true
	b := compat.ChunkBuilder{ID: "chatcmpl-" + st.id[len("req_"):], Model: a.Model, Created: time.Now().Unix()}
	if b.Model == "" {
		b.Model = s.responseModel(st.req.Model)
	}
	c.Set(headerXCache, "HIT")
	ev := Event{Status: http.StatusOK, Cache: "hit"}
	if st.req.Stream {
		st.ground = &Grounding{Events: a.Events}
		src := &answerSource{i: -1}
		src.chunks = append(src.chunks, b.Role())
		if a.Content != "" || len(a.Annotations) > 0 {
			src.chunks = append(src.chunks, b.Content(a.Content, a.Annotations...))
		}
		src.chunks = append(src.chunks, b.Finish(a.FinishReason))
		if a.Usage != nil {
			src.chunks = append(src.chunks, b.Usage(*a.Usage))
		}
		s.streamBody(c, st, func(sw *sseWriter) { s.relay(sw, st, src, ev) })
		return nil
	}
	var u compat.Usage
	if a.Usage != nil {
		u = *a.Usage
		s.observeUsage(st, u)
	}
	body := b.Completion(a.Content, u, a.Annotations)
	if s.collect {
		ev.Content = a.Content
	}
	s.end(st, ev)
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Status(http.StatusOK).Send(body)
}

// completionAnswer is the record of a non-stream answer, nil when it holds
// more than text.
func completionAnswer(body []byte, text string, anns []compat.Annotation, usage *compat.Usage) *cachedAnswer {
	r := gjson.GetManyBytes(body, "model", "choices.#", "choices.0.finish_reason", "choices.0.message.tool_calls",
		"choices.0.message.refusal", "choices.0.message.audio")
	if r[1].Int() != 1 || r[3].Exists() && r[3].Type != gjson.Null || r[4].Type == gjson.String ||
		r[5].Exists() && r[5].Type != gjson.Null {
		return nil
	}
	return &cachedAnswer{Model: r[0].String(), Content: text, FinishReason: r[2].String(), Annotations: anns, Usage: usage}
}

// policy decides whether and how the cache takes part in a request; nil
// means not at all.
func (rc *responseCache) policy(s *Server, st *chatState, h http.Header) *cacheState {
	optIn := strings.ToLower(strings.TrimSpace(h.Get(headerCacheOptIn)))
	if optIn == "off" || !cacheable(st.req, optIn == "on") {
		return nil
	}
	cs := &cacheState{read: true, write: true}
	for _, v := range h.Values(fiber.HeaderCacheControl) {
		for _, d := range strings.Split(v, ",") {
			switch strings.ToLower(strings.TrimSpace(d)) {
			case "no-cache":
				cs.read = false
			case "no-store":
				cs.write = false
			}
		}
	}
	if !cs.read && !cs.write {
		return nil
	}
	cs.key = rc.key(s, st, h)
	return cs
}

// cacheable reports whether req's answer is a function of the request.
func cacheable(req *compat.ChatRequest, optIn bool) bool {
	f := req.Fields
	if !optIn {
		t, ok := f["temperature"]
		if !ok {
			return false // OpenAI's default temperature is 1
		}
		v, err := strconv.ParseFloat(string(bytes.TrimSpace(t)), 64)
		if err != nil || v != 0 {
			return false
		}
	}
	if n, ok := f["n"]; ok && !isJSON(n, "null") && !isJSON(n, "1") {
		return false
	}
	if lp, ok := f["logprobs"]; ok && isJSON(lp, "true") {
		return false
	}
	if _, ok := f["audio"]; ok {
		return false
	}
	if m, ok := f["modalities"]; ok && bytes.Contains(m, []byte(`"audio"`)) {
		return false
	}
	for _, m := range req.Messages {
		if !textOnly(m.Content) {
			return false
		}
	}
	return true
}

func isJSON(raw json.RawMessage, want string) bool { return string(bytes.TrimSpace(raw)) == want }

// textOnly reports a message content with no image, audio or file parts.
func textOnly(content json.RawMessage) bool {
	c := bytes.TrimSpace(content)
	if len(c) == 0 || c[0] != '[' {
		return true
	}
	ok := true
	gjson.ParseBytes(c).ForEach(func(_, part gjson.Result) bool {
		if t := part.Get("type").String(); t != "text" && t != "input_text" {
			ok = false
		}
		return ok
	})
	return ok
}

// key derives the cache key of a request.
func (rc *responseCache) key(s *Server, st *chatState, h http.Header) string {
	body := make(map[string]json.RawMessage, len(st.req.Fields))
	for k, v := range st.req.Fields {
		if !rc.excluded[k] {
			body[k] = v
		}
	}
	// What the Grounder decides from headers: the task (which folds in
	// X-Ragproxy-Retrieval: off) and whatever else it reads of them.
	grounding := map[string]any{"task": st.task}
	if v, ok := s.cfg.Grounder.(Varier); ok {
		grounding["vary"] = v.Vary(h)
	}
	return cache.Key(cacheKeyVersion, s.upstreamModel(st.req.Model), st.req.Model, body, grounding,
		rc.settings, s.indexVersion(), rc.prompt)
}
