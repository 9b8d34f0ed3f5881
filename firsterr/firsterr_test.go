package firsterr

import (
	"errors"
	"sync"
	"testing"
)

func TestHolder(t *testing.T) {
	var h Holder
	if h.Err() != nil {
		t.Fatal("a new Holder has an error")
	}
	first := errors.New("first")
	h.Keep(nil)
	h.Keep(first)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { h.Keep(errors.New("later")) })
	}
	wg.Wait()
	h.Keep(nil)
	if h.Err() != first {
		t.Errorf("Err() = %v, want the first error", h.Err())
	}
}
