package server

import (
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"
)

// Connection hygiene: the listener the server accepts on caps the connections it holds open and survives running
// out of file descriptors; fasthttp's own accept loop ends Serve (and the process) on an error such as EMFILE.

// defaultMaxConns is Config.MaxConns's default: three quarters of the process's file-descriptor limit, leaving
// the rest for upstream connections, Redis and files; 10000 when the limit cannot be read.
func defaultMaxConns() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == 0 {
		return 10000
	}
	return max(int(min(rl.Cur, 1<<20)*3/4), 16)
}

// cappedListener accepts at most max connections at a time: past the cap, Accept waits for one to close (new
// clients wait in the kernel's backlog instead of taking descriptors). A transient accept error (no descriptors
// left, aborted connections) is retried with a growing pause instead of ending the server.
type cappedListener struct {
	net.Listener
	slots chan struct{}
	// pause is waited after the first transient error; it doubles up to maxPause.
	pause, maxPause time.Duration
	onError         func(err error)
	closed          chan struct{}
	closeOnce       sync.Once
	// linger is how much a closing connection may still read and discard (see slotConn.Close).
	linger int64
	// held are the buffers of the connections' held writes (see slotConn.holdWrites).
	held sync.Pool
	// open maps the client address (netip.AddrPort) of each open TCP connection to it, so that a handler can
	// reach its connection under the wrappers the HTTP server puts around it (see conn).
	open sync.Map
}

// conn returns the open connection whose client address is remote, nil when there is none.
func (l *cappedListener) conn(remote net.Addr) *slotConn {
	ta, ok := remote.(*net.TCPAddr)
	if !ok {
		return nil
	}
	c, _ := l.open.Load(ta.AddrPort())
	sc, _ := c.(*slotConn)
	return sc
}

func newCappedListener(ln net.Listener, maxConns int, linger int64, onError func(error)) *cappedListener {
	return &cappedListener{Listener: ln, slots: make(chan struct{}, maxConns), pause: 5 * time.Millisecond,
		maxPause: time.Second, onError: onError, closed: make(chan struct{}), linger: linger}
}

// Close closes the listener; an Accept waiting for a free slot returns at once.
func (l *cappedListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return l.Listener.Close()
}

func (l *cappedListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.closed:
		return nil, net.ErrClosed
	}
	wait := time.Duration(0)
	for {
		c, err := l.Listener.Accept()
		if err == nil {
			sc := &slotConn{Conn: c, linger: l.linger, bufs: &l.held}
			ta, registered := c.RemoteAddr().(*net.TCPAddr)
			if registered {
				l.open.Store(ta.AddrPort(), sc)
			}
			sc.release = func() {
				if registered {
					l.open.CompareAndDelete(ta.AddrPort(), sc)
				}
				<-l.slots
			}
			return sc, nil
		}
		if !transientAcceptError(err) {
			<-l.slots
			return nil, err
		}
		if l.onError != nil {
			l.onError(err)
		}
		wait = min(max(2*wait, l.pause), l.maxPause)
		select {
		case <-time.After(wait):
		case <-l.closed:
			<-l.slots
			return nil, net.ErrClosed
		}
	}
}

// transientAcceptError reports an accept error the server can wait out: descriptors exhausted (EMFILE, ENFILE),
// buffers short, a connection reset before it was accepted, or an error that says it is temporary.
func transientAcceptError(err error) bool {
	if errors.Is(err, net.ErrClosed) {
		return false
	}
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED,
		syscall.ECONNRESET, syscall.EINTR} {
		if errors.Is(err, e) {
			return true
		}
	}
	var te interface{ Temporary() bool }
	return errors.As(err, &te) && te.Temporary()
}

// lingerTime bounds how long a closing connection reads what its client still sends.
const lingerTime = 2 * time.Second

// slotConn gives its listener slot back when closed, once. Closing a connection whose client is still sending
// (a body over the limit is refused before it is read) would reset it, and the client would see a connection
// error instead of the answer already sent (the SDKs then retry): so the server first ends its side, reads and
// discards what still comes, up to linger bytes for lingerTime, and only then closes.
type slotConn struct {
	net.Conn
	once    sync.Once
	release func()
	linger  int64

	// wmu guards holding and held (see holdWrites); held's buffer comes from bufs, nil when there are none.
	wmu     sync.Mutex
	holding bool
	held    *[]byte
	bufs    *sync.Pool
}

// maxPooledHeld is the largest buffer of held writes that goes back to the pool.
const maxPooledHeld = 64 << 10

// writeHolder is a connection that can keep writes back and send them with the next one.
type writeHolder interface {
	// holdWrites(true) keeps back what is written from then on; after holdWrites(false) it goes out in one
	// write with whatever is written next, or when the connection closes.
	holdWrites(on bool)
}

var _ writeHolder = (*slotConn)(nil)

func (c *slotConn) holdWrites(on bool) {
	c.wmu.Lock()
	c.holding = on
	c.wmu.Unlock()
}

// Write writes p, after what was held back; while holding, it only keeps p.
func (c *slotConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.holding {
		c.keep(p)
		return len(p), nil
	}
	if c.held == nil {
		return c.Conn.Write(p)
	}
	held := len(*c.held)
	c.keep(p)
	n, err := c.Conn.Write(*c.held)
	c.dropHeld()
	if n -= held; n < 0 {
		n = 0
	}
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return n, err
}

// keep appends p to what is held, in a buffer from the pool (a connection holds one only while it holds writes).
func (c *slotConn) keep(p []byte) {
	if c.held == nil {
		if c.bufs != nil {
			c.held, _ = c.bufs.Get().(*[]byte)
		}
		if c.held == nil {
			c.held = new([]byte)
		}
	}
	*c.held = append(*c.held, p...)
}

// dropHeld gives the buffer of held writes back.
func (c *slotConn) dropHeld() {
	if c.bufs != nil && cap(*c.held) <= maxPooledHeld {
		*c.held = (*c.held)[:0]
		c.bufs.Put(c.held)
	}
	c.held = nil
}

// flushHeld sends what was held back, if anything.
func (c *slotConn) flushHeld() {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.holding = false
	if c.held != nil {
		_, _ = c.Conn.Write(*c.held)
		c.dropHeld()
	}
}

func (c *slotConn) Close() error {
	c.flushHeld()
	c.once.Do(func() {
		tc, ok := c.Conn.(*net.TCPConn)
		if !ok || c.linger <= 0 || tc.CloseWrite() != nil {
			_ = c.Conn.Close()
			c.release()
			return
		}
		go func() {
			_ = tc.SetReadDeadline(time.Now().Add(lingerTime))
			_, _ = io.CopyN(io.Discard, tc, c.linger)
			_ = tc.Close()
			c.release()
		}()
	})
	return nil
}

// burstLog logs the first of a burst of errors and then at most one a minute, with the count since.
type burstLog struct {
	mu     sync.Mutex
	last   time.Time
	missed int
}

func (b *burstLog) note(log interface {
	Warn(msg string, args ...any)
}, msg string, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if time.Since(b.last) < time.Minute {
		b.missed++
		return
	}
	log.Warn(msg, "err", err, "since_last_log", b.missed)
	b.last, b.missed = time.Now(), 0
}
