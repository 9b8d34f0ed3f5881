package server

import (
	"context"
	"time"

	"github.com/ragproxy/ragproxy/compat"
)

// Observer receives the life of each chat request, for metrics, logs and
// caches. Observe is called synchronously on the request's path, so it must
// be quick and safe for concurrent use; the default is a no-op.
//
// For one request the events arrive in this order: EventStart; EventUpstream
// once the upstream answered (or failed) with the attempts it took; at most
// one EventFirstToken; at most one EventUsage; EventEnd last, always.
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
	// Upstream and Attempts tell which upstream served the request and how
	// many attempts it took (EventUpstream, EventEnd); Grounded reports an
	// answer written by the Grounder with no upstream call.
	Upstream string
	Attempts int
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
}

type nopObserver struct{}

func (nopObserver) Observe(context.Context, Event) {}
