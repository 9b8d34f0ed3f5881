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
	// Question is the Grounder's report of the question answered, for the question log of a replayed answer.
	Question *QuestionReport `json:"question,omitempty"`
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
	// for concurrent identical requests: finish sends the answer (or nil)
	// there exactly once. settled is closed once the Group is done with it
	// (the answer stored if it can be, waiting requests answered).
	handoff chan *cachedAnswer
	settled chan struct{}
	// served reports an answer replayed from the cache.
	served bool
}

// responseCache is the server's response cache; nil when Config.Cache is nil. It knows of the server only what
// its keys hold besides the request: the upstream a model goes to and the index version, which may change while
// serving.
type responseCache struct {
	group    *cache.Group
	excluded map[string]bool
	settings string
	prompt   string
	// varier is the Grounder when it reads headers (nil otherwise).
	varier        Varier
	upstreamModel func(model string) string
	indexVersion  func() string
}

func newResponseCache(cfg Config, upstreamModel func(string) string, indexVersion func() string) *responseCache {
	if cfg.Cache == nil {
		return nil
	}
	ttl := cfg.CacheTTL
	if ttl <= 0 {
		ttl = defaultCacheTTL
	}
	v, _ := cfg.Grounder.(Varier)
	return &responseCache{group: &cache.Group{Cache: cfg.Cache, TTL: ttl}, excluded: keyExcludedFields(),
		settings: cfg.RetrievalSettings, prompt: cfg.PromptVersion, varier: v, upstreamModel: upstreamModel,
		indexVersion: indexVersion}
}

// errNotShared tells requests waiting on a concurrent identical request that
// its answer cannot be replayed; each then asks upstream itself.
var errNotShared = errors.New("response cache: answer not shareable")

// lookup looks the request up. It returns the cache's part in the request (nil when it takes none, which finish
// is then told of) and, when the answer is known already, that answer for the caller to replay: stored, or
// computed by a concurrent identical request. err reports that ctx ended while the request waited for such an
// answer.
func (rc *responseCache) lookup(ctx context.Context, req *compat.ChatRequest, task string, h http.Header) (*cacheState, *cachedAnswer, error) {
	cs := rc.policy(req, task, h)
	if cs == nil {
		return nil, nil, nil
	}
	switch {
	case cs.read && cs.write:
		return rc.flight(ctx, cs)
	case cs.read: // no-store: a lookup only
		val, ok, _ := rc.group.Cache.Get(ctx, cs.key)
		if a := decodeAnswer(val, ok); a != nil {
			cs.result, cs.served = "hit", true
			return cs, a, nil
		}
		cs.result = "miss"
	}
	return cs, nil, nil
}

// flight runs the lookup through the Group: on a miss this request either leads (goes upstream, and finish hands
// its answer over) or waits for the leader's answer.
func (rc *responseCache) flight(ctx context.Context, cs *cacheState) (*cacheState, *cachedAnswer, error) {
	led := make(chan struct{})
	handoff := make(chan *cachedAnswer, 1)
	type done struct {
		val []byte
		err error
	}
	// Buffered, so the goroutine ends once the Group returns (which it does when ctx ends) even when this
	// request no longer listens (it became the leader).
	resc := make(chan done, 1)
	settled := make(chan struct{})
	go func() {
		defer close(settled)
		val, _, err := rc.group.Do(ctx, cs.key, func(context.Context) ([]byte, bool, error) {
			close(led)
			a := <-handoff // finish sends exactly once
			if a == nil || a.FinishReason != "stop" {
				return nil, false, errNotShared
			}
			b, err := json.Marshal(a)
			if err != nil {
				return nil, false, errNotShared
			}
			return b, true, nil
		})
		resc <- done{val, err}
	}()
	select {
	case <-led:
		cs.handoff, cs.settled, cs.result = handoff, settled, "miss"
		return cs, nil, nil
	case r := <-resc:
		if r.err != nil && ctx.Err() != nil {
			return nil, nil, r.err
		}
		// An answer that could not be shared: this one is answered uncached, as if there were no cache.
		a := decodeAnswer(r.val, r.err == nil)
		if a == nil {
			return nil, nil, nil
		}
		cs.result, cs.served = "hit", true // Shared counts as a hit: no upstream call of its own
		return cs, a, nil
	}
}

// finish runs as the request ends, with its answer (nil when there is none to keep): it hands the answer to
// waiting identical requests, or stores it.
func (rc *responseCache) finish(ctx context.Context, cs *cacheState, a *cachedAnswer) {
	if cs.served {
		return
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
			_ = rc.group.Cache.Set(ctx, cs.key, b, rc.group.TTL) // see Config.Cache: wrap in a Tolerant
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
func (rc *responseCache) policy(req *compat.ChatRequest, task string, h http.Header) *cacheState {
	optIn := strings.ToLower(strings.TrimSpace(h.Get(headerCacheOptIn)))
	if optIn == "off" || !cacheable(req, optIn == "on") {
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
	cs.key = rc.key(req, task, h)
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
func (rc *responseCache) key(req *compat.ChatRequest, task string, h http.Header) string {
	body := make(map[string]json.RawMessage, len(req.Fields))
	for k, v := range req.Fields {
		if !rc.excluded[k] {
			body[k] = v
		}
	}
	// What the Grounder decides from headers: the task (which folds in
	// X-Ragproxy-Retrieval: off) and whatever else it reads of them.
	grounding := map[string]any{"task": task}
	if rc.varier != nil {
		grounding["vary"] = rc.varier.Vary(h)
	}
	return cache.Key(cacheKeyVersion, rc.upstreamModel(req.Model), req.Model, body, grounding,
		rc.settings, rc.indexVersion(), rc.prompt)
}
