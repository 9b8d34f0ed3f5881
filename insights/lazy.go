package insights

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Lazy is a Store opened on first use, and opened again when that failed: a database that is down when the
// server starts (a PostgreSQL that comes up after it) costs the insights until it is up, never the server's
// start or its answers. A failed open is retried at most every RetryEvery. It is safe for concurrent use.
type Lazy struct {
	// Open opens the store. Required.
	Open func(ctx context.Context) (Store, error)
	// RetryEvery is the least time between two attempts to open; default 10s.
	RetryEvery time.Duration
	// OnError, when set, is told of each failed open.
	OnError func(err error)
	// Now is the clock the retries are timed by; default time.Now.
	Now func() time.Time

	mu    sync.Mutex
	s     Store
	tried time.Time
	err   error
}

var _ Store = (*Lazy)(nil)

// store returns the open store, opening it if it is time to try.
func (l *Lazy) store(ctx context.Context) (Store, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.s != nil {
		return l.s, nil
	}
	every := l.RetryEvery
	if every <= 0 {
		every = 10 * time.Second
	}
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	if !l.tried.IsZero() && now().Sub(l.tried) < every {
		return nil, l.err
	}
	l.tried = now()
	s, err := l.Open(ctx)
	if err != nil {
		l.err = fmt.Errorf("insights: the database is not available: %w", err)
		if l.OnError != nil {
			l.OnError(err)
		}
		return nil, l.err
	}
	l.s, l.err = s, nil
	return s, nil
}

// AddQuestions implements Store.
func (l *Lazy) AddQuestions(ctx context.Context, qs []Question) error {
	s, err := l.store(ctx)
	if err != nil {
		return err
	}
	return s.AddQuestions(ctx, qs)
}

// AddFeedback implements Store.
func (l *Lazy) AddFeedback(ctx context.Context, f Feedback) error {
	s, err := l.store(ctx)
	if err != nil {
		return err
	}
	return s.AddFeedback(ctx, f)
}

// Report implements Store.
func (l *Lazy) Report(ctx context.Context, q ReportQuery) (*Report, error) {
	s, err := l.store(ctx)
	if err != nil {
		return nil, err
	}
	return s.Report(ctx, q)
}

// Questions implements Store.
func (l *Lazy) Questions(ctx context.Context, q ListQuery) (*QuestionList, error) {
	s, err := l.store(ctx)
	if err != nil {
		return nil, err
	}
	return s.Questions(ctx, q)
}

// AddFAQ implements Store.
func (l *Lazy) AddFAQ(ctx context.Context, e FAQEntry) (FAQEntry, error) {
	s, err := l.store(ctx)
	if err != nil {
		return FAQEntry{}, err
	}
	return s.AddFAQ(ctx, e)
}

// FAQEntries implements Store.
func (l *Lazy) FAQEntries(ctx context.Context) ([]FAQEntry, error) {
	s, err := l.store(ctx)
	if err != nil {
		return nil, err
	}
	return s.FAQEntries(ctx)
}

// DeleteFAQ implements Store.
func (l *Lazy) DeleteFAQ(ctx context.Context, id int64) error {
	s, err := l.store(ctx)
	if err != nil {
		return err
	}
	return s.DeleteFAQ(ctx, id)
}

// Prune implements Store.
func (l *Lazy) Prune(ctx context.Context, before time.Time) error {
	s, err := l.store(ctx)
	if err != nil {
		return err
	}
	return s.Prune(ctx, before)
}

// Ping implements Store: it also opens the store when it was not.
func (l *Lazy) Ping(ctx context.Context) error {
	s, err := l.store(ctx)
	if err != nil {
		return err
	}
	return s.Ping(ctx)
}

// Close implements Store.
func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.s == nil {
		return nil
	}
	err := l.s.Close()
	l.s = nil
	return err
}
