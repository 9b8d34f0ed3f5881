package server

import (
	"errors"
	"net"
	"os"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// A client that leaves should stop its request at once: the upstream call (and whatever analysis or retrieval
// runs) is cancelled instead of running on until the next write finds the connection gone, which a silent upstream
// can delay by minutes. While a request is answered, the client sends nothing more on its connection (HTTP/1.1
// clients do not pipeline in practice), so a read that returns means it has gone away.

// watchDelay is how long a request runs before its connection is watched: a request that ends sooner (an answer
// at hand, a refusal, a fast upstream) costs no watcher, its goroutine and its read, and one that runs on is
// still stopped within that much of its client leaving.
const watchDelay = 10 * time.Millisecond

// watchClient watches c's connection from watchDelay on (see watchConn) until stop is called, and calls gone when
// the client closes it. stop waits for the watcher.
func watchClient(c *fiber.Ctx, gone func()) (stop func()) {
	rc := c.Context() // the request's, valid until its response is written: c itself is released earlier
	conn := rc.Conn()
	if conn == nil {
		return func() {}
	}
	var mu sync.Mutex
	stopped := false
	var stopWatch func()
	timer := time.AfterFunc(watchDelay, func() {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			stopWatch = watchConn(rc, conn, gone)
		}
	})
	return func() {
		mu.Lock()
		stopped = true
		w := stopWatch
		mu.Unlock()
		timer.Stop()
		if w != nil {
			w()
		}
	}
}

// watchConn reads from conn until stop is called, and calls gone when the client closes it. If the client did
// send bytes (a pipelined request), they cannot be given back to the server's reader, so the connection is
// closed after the response. stop waits for the watcher and clears the read deadline it set.
func watchConn(rc *fasthttp.RequestCtx, conn net.Conn, gone func()) (stop func()) {
	// The server's deadline for reading this request no longer applies (it sets a new one before the next).
	if err := conn.SetReadDeadline(time.Time{}); err != nil {
		return func() {}
	}
	done := make(chan struct{})
	var stopping sync.Once
	var stopped bool
	var mu sync.Mutex
	go func() {
		defer close(done)
		var b [1]byte
		n, err := conn.Read(b[:])
		mu.Lock()
		defer mu.Unlock()
		switch {
		case n > 0:
			rc.SetConnectionClose()
		case stopped && (errors.Is(err, os.ErrDeadlineExceeded) || isTimeout(err)):
			// stop unblocked the read: the client is still there.
		case err != nil:
			gone()
		}
	}()
	return func() {
		stopping.Do(func() {
			mu.Lock()
			stopped = true
			mu.Unlock()
			_ = conn.SetReadDeadline(time.Now())
			<-done
			_ = conn.SetReadDeadline(time.Time{})
		})
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
