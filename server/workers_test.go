package server

import (
	"bytes"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// goroutineID reads the running goroutine's number from its stack trace's header.
func goroutineID(t *testing.T) int {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := bytes.Fields(buf)
	if len(f) < 2 {
		t.Fatalf("stack header %q", buf)
	}
	id, err := strconv.Atoi(string(f[1]))
	if err != nil {
		t.Fatalf("stack header %q: %v", buf, err)
	}
	return id
}

// TestWorkersKeepGoroutines checks that functions run one after another go to the goroutines already there, not
// one new goroutine each, and that those goroutines end once idle.
func TestWorkersKeepGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	w := newWorkers(50 * time.Millisecond)
	seen := map[int]bool{}
	for range 100 {
		done := make(chan int)
		w.run(func() { done <- goroutineID(t) })
		seen[<-done] = true
	}
	if len(seen) > 5 {
		t.Errorf("100 functions run one after another took %d goroutines, want a few", len(seen))
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("goroutines = %d after the workers were idle, want %d", n, before)
	}
}
