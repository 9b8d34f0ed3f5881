package server

import (
	"context"
	"time"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/upstream"
)

// Observer receives the life of each chat request, for metrics, logs and
// caches. Observe is called synchronously on the request's path, so it must
// be quick and safe for concurrent use; the default is a no-op.
//
// For one request the events arrive in this order: EventStart; EventUpstream
// once the upstream answered (or the call failed), listing every attempt; at
// most one EventFirstToken; at most one EventUsage; EventEnd last, always.
type Observer interface {
	Observe(ctx context.Context, ev Event)
}

// ContentObserver is an optional Observer capability: when CollectContent
// returns true the EventEnd carries the full answer text as sent (after
// filtering), which a response cache needs.
type ContentObserver interface {
	CollectContent() bool
}

// EventKind says which moment of a request an Event reports.
type EventKind int

// The kinds of Event.
const (
	EventStart EventKind = iota
	EventUpstream
	EventFirstToken
	EventUsage
	EventEnd
)

// Event is one moment of a chat request.
type Event struct {
	Kind      EventKind
	RequestID string
	// Model is the model the client asked for.
	Model  string
	Stream bool
	// Elapsed is the time since the request arrived.
	Elapsed time.Duration
	// Upstream names the upstream that answered ("" when none did) and
	// Attempts lists every attempt sent upstream, in order, each with its
	// upstream and outcome, including the failed ones before an answer
	// (EventUpstream, EventEnd). Grounded reports an answer written by the
	// Grounder with no upstream call.
	Upstream string
	Attempts []upstream.Attempt
	Grounded bool
	// Usage is set on EventUsage.
	Usage compat.Usage
	// Status is the HTTP status (EventEnd; 200 for a stream that later
	// failed, with Err set).
	Status int
	// Err is the error that ended the request, if any.
	Err error
	// Content is the answer text, on EventEnd for a ContentObserver.
	Content string
	// Task is the request's TaskKind ("" for a user's question).
	Task string
	// Prepared is the time from arrival until the request was ready to go
	// upstream (decoding, cache lookup, retrieval); zero when no upstream
	// call was started. Elapsed minus Prepared on EventUpstream is the time
	// the upstream took to answer (non-stream) or to start streaming.
	Prepared time.Duration
	// Cache is the response cache's result on EventEnd: "hit" (answered
	// from the cache, or from a concurrent identical request's answer),
	// "miss" (looked up, not found), or "" when the cache took no part.
	Cache string
	// ClientGone reports on EventEnd that the client went away before the
	// stream ended.
	ClientGone bool
}

// Failover reports whether the request was sent to the fallback upstream:
// at least one of its attempts went there, whether or not the fallback
// answered. Retries on the primary alone are no failover.
func (e Event) Failover() bool {
	return upstream.Served{Upstream: e.Upstream, Attempts: e.Attempts}.Failover()
}

// RequestObserver is an optional Observer capability: ObserveRequest is
// called once for every HTTP request the server answers, on every route,
// when the handler has returned (for a stream: when its headers go out).
type RequestObserver interface {
	ObserveRequest(ctx context.Context, info RequestInfo)
}

// RequestInfo describes one answered HTTP request.
type RequestInfo struct {
	RequestID string
	Method    string
	// Route is the matched route pattern ("/v1/chat/completions"), not the
	// raw path.
	Route  string
	Status int
	// Stream and Task are set for chat requests whose body was decoded.
	Stream bool
	Task   string
	// Chat reports that the request also produced Observer events, ending
	// with EventEnd.
	Chat bool
	// Elapsed is the time from arrival until the handler returned.
	Elapsed time.Duration
}

type requestIDKey struct{}

// RequestID returns the id of the chat request ctx belongs to ("" outside
// one). The contexts handed to a Grounder and an Observer carry it, so hooks
// such as MetricsObserver.ObserveRetrieval can attribute their work.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

type nopObserver struct{}

func (nopObserver) Observe(context.Context, Event) {}
