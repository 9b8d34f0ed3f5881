// Package firsterr keeps the first error of work spread over goroutines.
package firsterr

import "sync"

// Holder keeps the first non-nil error it is given. The zero value is ready; it is safe for concurrent use.
type Holder struct {
	mu  sync.Mutex
	err error
}

// Keep records err unless an error came first or err is nil.
func (h *Holder) Keep(err error) {
	if err == nil {
		return
	}
	h.mu.Lock()
	if h.err == nil {
		h.err = err
	}
	h.mu.Unlock()
}

// Err returns the first error kept, or nil.
func (h *Holder) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}
