package upstream

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"
)

// eventReader reads a text/event-stream the way the WHATWG HTML standard's "Interpreting an event stream"
// describes, as far as a chat-completion stream needs it: lines end in LF or CRLF, a blank line ends an event,
// lines starting with a colon are comments, and an event's data is its data lines, each followed by a newline.
// Event types, ids and retry times are read and ignored, and an unfinished event at the end of the stream is
// dropped. Unlike a line scanner it can tell whether a whole event is already buffered (ready), so the proxy
// knows when the frames it holds must go out before it waits for the upstream again.
type eventReader struct {
	br   *bufio.Reader
	data []byte // the current event's data, reused from one event to the next
	long []byte // a line longer than the buffer, gathered
	err  error
	pool *sync.Pool // where the buffer goes back on close; nil when it has none
}

// eventBufferSize holds several typical chunks, so the ones that arrive together are read (and relayed) together.
const eventBufferSize = 16 << 10

func newEventReader(r io.Reader) *eventReader {
	return newPooledEventReader(r, nil)
}

// newPooledEventReader is newEventReader with its buffer taken from pool (a pool of *bufio.Reader of
// eventBufferSize; nil for none), where close gives it back: a stream's buffer is most of what relaying it
// allocates, and a fresh one is zeroed and later collected for each stream.
func newPooledEventReader(r io.Reader, pool *sync.Pool) *eventReader {
	if pool == nil {
		return &eventReader{br: bufio.NewReaderSize(r, eventBufferSize)}
	}
	br, _ := pool.Get().(*bufio.Reader)
	if br == nil {
		br = bufio.NewReaderSize(r, eventBufferSize)
	} else {
		br.Reset(r)
	}
	return &eventReader{br: br, pool: pool}
}

// close gives the buffer back to its pool; the reader reads nothing after it, and what next returned is no
// longer valid.
func (e *eventReader) close() {
	if e.pool != nil && e.br != nil {
		e.br.Reset(nil)
		e.pool.Put(e.br)
	}
	e.br = nil
	if e.err == nil {
		e.err = io.ErrClosedPipe
	}
}

var (
	fieldData = []byte("data")
	blankLF   = []byte("\n\n")
	blankCRLF = []byte("\n\r\n")
)

// next reads up to the end of the next event that has data and returns the data, valid until the next call. It
// returns false at the end of the stream or on a read error (err).
func (e *eventReader) next() ([]byte, bool) {
	e.data = e.data[:0]
	for {
		line, ok := e.line()
		if !ok {
			return nil, false
		}
		if len(line) == 0 {
			if len(e.data) > 0 {
				return e.data, true
			}
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		if !bytes.Equal(name, fieldData) {
			continue // a comment (empty name) or a field the proxy does not use
		}
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		e.data = append(e.data, value...)
		e.data = append(e.data, '\n')
	}
}

// line returns the next line without its line ending, valid until the next read.
func (e *eventReader) line() ([]byte, bool) {
	if e.err != nil {
		return nil, false
	}
	line, err := e.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		e.long = append(e.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = e.br.ReadSlice('\n')
			e.long = append(e.long, line...)
		}
		line = e.long
	}
	if err != nil {
		// A line cut off by the end of the stream ends no event, so it is dropped with the event it was in.
		e.err = err
		return nil, false
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, true
}

// ready reports whether an event with data is already buffered whole, so that next returns it without reading.
func (e *eventReader) ready() bool {
	if e.err != nil {
		return false
	}
	buf, _ := e.br.Peek(e.br.Buffered())
	for len(buf) > 0 {
		end := bytes.Index(buf, blankLF)
		// A CRLF blank line that ends the event first lies before the LF one: only that much is searched, not
		// the whole buffer for each event.
		limit := len(buf)
		if end >= 0 {
			limit = end + len(blankLF) // a "\n\r\n" starting before end ends by then
		}
		if crlf := bytes.Index(buf[:limit], blankCRLF); crlf >= 0 {
			end = crlf
		}
		if end < 0 {
			return false
		}
		if hasData(buf[:end+1]) {
			return true
		}
		buf = buf[end+2:]
		if len(buf) > 0 && buf[0] == '\n' {
			buf = buf[1:] // the LF of a CRLF blank line
		}
	}
	return false
}

// hasData reports whether the lines of one event hold a data field.
func hasData(event []byte) bool {
	for len(event) > 0 {
		line, rest, _ := bytes.Cut(event, []byte("\n"))
		if bytes.HasPrefix(line, fieldData) && (len(line) == len(fieldData) || line[len(fieldData)] == ':' ||
			line[len(fieldData)] == '\r') {
			return true
		}
		event = rest
	}
	return false
}

// failed returns the read error that ended the stream, nil at its end.
func (e *eventReader) failed() error {
	if e.err == io.EOF {
		return nil
	}
	return e.err
}
