package server

import (
	"bufio"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// errClientGone marks a stream whose client stopped reading.
var errClientGone = errors.New("client disconnected")

// sseWriter writes server-sent events to a fasthttp stream writer. A write
// or flush error means the client left: the error sticks and the request is
// cancelled so the upstream call stops. Its methods are safe for use by the
// relay and the heartbeat goroutine at once.
type sseWriter struct {
	mu     sync.Mutex
	w      *bufio.Writer
	err    error
	wrote  bool
	cancel func()
	// conn is the client's connection when it can hold a write back (nil otherwise): the stream's last frame
	// then goes out together with the end of the chunked body that the server writes after it (see end).
	conn writeHolder
}

func newSSEWriter(w *bufio.Writer, cancel func()) *sseWriter {
	return &sseWriter{w: w, cancel: cancel}
}

var (
	framePrefix = []byte("data: ")
	frameEnd    = []byte("\n\n")
	framePing   = []byte(": ping\n\n")
	frameDone   = []byte("data: [DONE]\n\n")
)

// data writes one "data: <b>\n\n" frame and flushes it.
func (s *sseWriter) data(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.writeLocked(b)
	return s.flushLocked()
}

// frame writes one "data: <b>\n\n" frame and leaves it buffered until a flush, so that the frames that are ready
// together go out in one write. (The buffer writes on its own when it fills.)
func (s *sseWriter) frame(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.writeLocked(b)
	s.wrote = true
	return nil
}

func (s *sseWriter) writeLocked(b []byte) {
	s.w.Write(framePrefix)
	s.w.Write(b)
	s.w.Write(frameEnd)
}

// flush sends the buffered frames.
func (s *sseWriter) flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if s.w.Buffered() == 0 {
		return nil
	}
	return s.flushLocked()
}

// end writes the stream's last frame and flushes it. The connection holds that write back until the server
// writes the end of the chunked body, so both reach the client in one segment: a client that stops reading at
// data: [DONE] (the OpenAI SDKs do) has then also read the body's end, and Go's HTTP client, for one, keeps the
// connection for its next request only in that case.
func (s *sseWriter) end(frame []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.w.Write(frame)
	if s.conn != nil {
		s.conn.holdWrites(true)
		defer s.conn.holdWrites(false)
	}
	return s.flushLocked()
}

func (s *sseWriter) flushLocked() error {
	s.wrote = true
	if err := s.w.Flush(); err != nil {
		s.err = errors.Join(errClientGone, err)
		s.cancel()
		return s.err
	}
	return nil
}

// failed returns the sticky write error.
func (s *sseWriter) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// heartbeat sends ": ping" whenever a whole interval passed without a
// frame, until stop is called; once stop returns, no ping is written. A timer
// runs each ping, so a stream that ends within the interval (most do) costs
// no goroutine.
func (s *sseWriter) heartbeat(interval time.Duration) (stop func()) {
	var mu sync.Mutex
	stopped := false
	var t *time.Timer
	mu.Lock() // t is set before the first tick can use it
	defer mu.Unlock()
	t = time.AfterFunc(interval, func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped || s.ping() != nil {
			return
		}
		t.Reset(interval)
	})
	return func() {
		mu.Lock()
		defer mu.Unlock()
		stopped = true
		t.Stop()
	}
}

// ping writes a ping when no frame went out since the last call, and resets
// that record.
func (s *sseWriter) ping() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	quiet := !s.wrote
	s.wrote = false
	if !quiet {
		return nil
	}
	s.w.Write(framePing)
	err := s.flushLocked()
	s.wrote = false // a ping is not a frame
	return err
}

// sseBody is an event stream's response body that writes straight to the connection: fasthttp frames each write
// of WriteTo as one chunk of the chunked body and flushes it, so the stream needs neither the pipe nor the
// goroutine that fasthttp's SetBodyStreamWriter puts between the writer and the connection, and each flush of
// the sseWriter is one write to the client. Anything that reads the body instead gets it through that pipe.
type sseBody struct {
	write func(*bufio.Writer)
	piped io.ReadCloser // set once the body is read rather than written
	// writers holds the *bufio.Writer of sseBufferSize that WriteTo takes and gives back (the server's, shared
	// by its streams; nil for a fresh one each time).
	writers *sync.Pool
}

var _ fasthttp.BodyWriterTo = (*sseBody)(nil)

// SupportsBodyWriteTo tells fasthttp that WriteTo writes what Read would read.
func (b *sseBody) SupportsBodyWriteTo() bool { return true }

// WriteTo runs the stream's writer on w.
func (b *sseBody) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	var bw *bufio.Writer
	if b.writers != nil {
		bw, _ = b.writers.Get().(*bufio.Writer)
	}
	if bw == nil {
		bw = bufio.NewWriterSize(cw, sseBufferSize)
	} else {
		bw.Reset(cw)
	}
	b.write(bw) // the stream's writers, its heartbeat's included, are done with bw when it returns
	err := bw.Flush()
	if b.writers != nil {
		bw.Reset(nil)
		b.writers.Put(bw)
	}
	return cw.n, err
}

// sseBufferSize is the writer's buffer: frames that are ready together up to this size go out in one write.
const sseBufferSize = 8 << 10

func (b *sseBody) Read(p []byte) (int, error) {
	if b.piped == nil {
		b.piped = fasthttp.NewStreamReader(b.write)
	}
	return b.piped.Read(p)
}

// Close ends a piped body; fasthttp closes the body once the response is written.
func (b *sseBody) Close() error {
	if b.piped != nil {
		return b.piped.Close()
	}
	return nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
