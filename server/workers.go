package server

import "time"

// workers runs functions on goroutines that it keeps for a while after each one. A new goroutine starts with a
// small stack and grows it, by copying, as its calls go deeper; an upstream call (the SDK over net/http) did so
// on every request. A kept goroutine has the stack that its last call needed. Each goroutine ends once it has
// been idle for a while. It is safe for concurrent use.
type workers struct {
	jobs chan func()
	idle time.Duration
}

// workerIdle is how long a caller goroutine waits for its next upstream call before it ends.
const workerIdle = 10 * time.Second

// newWorkers returns workers whose goroutines end once idle for idle.
func newWorkers(idle time.Duration) *workers { return &workers{jobs: make(chan func()), idle: idle} }

// run runs f on an idle goroutine, or on a new one when none is idle; it does not wait for f.
func (w *workers) run(f func()) {
	select {
	case w.jobs <- f:
	default:
		go w.work(f)
	}
}

func (w *workers) work(f func()) {
	idle := time.NewTimer(w.idle)
	defer idle.Stop()
	for {
		f()
		idle.Reset(w.idle)
		select {
		case f = <-w.jobs:
		case <-idle.C:
			return
		}
	}
}
