package upstream

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// readEvents returns every event's data the reader yields, and its error.
func readEvents(r io.Reader) ([]string, error) {
	e := newEventReader(r)
	var got []string
	for {
		data, ok := e.next()
		if !ok {
			return got, e.failed()
		}
		got = append(got, string(data))
	}
}

func TestEventReader(t *testing.T) {
	long := strings.Repeat("x", 3*eventBufferSize)
	tests := []struct {
		name, in string
		want     []string
	}{
		{"frames", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []string{"{\"a\":1}\n", "[DONE]\n"}},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"a\n", "b\n"}},
		{"no space after colon", "data:a\n\n", []string{"a\n"}},
		{"two data lines", "data: a\ndata: b\n\n", []string{"a\nb\n"}},
		{"comments and other fields", ": ping\n\nevent: message\nid: 7\nretry: 10\ndata: a\n\n", []string{"a\n"}},
		{"field without colon", "data\n\n", []string{"\n"}},
		{"unfinished event dropped", "data: a\n\ndata: b\n", []string{"a\n"}},
		{"line cut off dropped", "data: a\n\ndata: b", []string{"a\n"}},
		{"line longer than the buffer", "data: " + long + "\n\ndata: b\n\n", []string{long + "\n", "b\n"}},
		{"nothing", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []struct {
				name string
				r    io.Reader
			}{{"whole", strings.NewReader(tt.in)}, {"byte by byte", iotest.OneByteReader(strings.NewReader(tt.in))}} {
				got, err := readEvents(r.r)
				if err != nil {
					t.Fatalf("%s: %v", r.name, err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("%s: events (-want +got):\n%s", r.name, diff)
				}
			}
		})
	}
}

func TestEventReaderError(t *testing.T) {
	_, err := readEvents(io.MultiReader(strings.NewReader("data: a\n\n"), iotest.ErrReader(io.ErrUnexpectedEOF)))
	if err != io.ErrUnexpectedEOF {
		t.Errorf("error = %v, want %v", err, io.ErrUnexpectedEOF)
	}
}

// TestEventReaderReady checks that ready reports a buffered whole event with data, and nothing else.
func TestEventReaderReady(t *testing.T) {
	tests := []struct {
		name, in string
		want     bool
	}{
		{"next event whole", "data: a\n\ndata: b\n\n", true},
		{"next event whole, crlf", "data: a\r\n\r\ndata: b\r\n\r\n", true},
		{"next event partial", "data: a\n\ndata: b\n", false},
		{"next event half a line", "data: a\n\ndat", false},
		{"only a comment", "data: a\n\n: ping\n\n", false},
		{"comment, then an event", "data: a\n\n: ping\n\ndata: b\n\n", true},
		{"nothing more", "data: a\n\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEventReader(strings.NewReader(tt.in))
			if _, ok := e.next(); !ok {
				t.Fatal("no first event")
			}
			if got := e.ready(); got != tt.want {
				t.Errorf("ready() = %v, want %v", got, tt.want)
			}
			if tt.want {
				// What ready promised must be there: reading on returns an event.
				if _, ok := e.next(); !ok {
					t.Errorf("ready() but no next event")
				}
			}
		})
	}
}

// FuzzEventReader checks the reader against openai-go's event stream decoder, which the proxy used before: the
// same events with the same data for any input, and ready never promises an event that is not there.
func FuzzEventReader(f *testing.F) {
	for _, s := range []string{"data: {\"a\":1}\n\ndata: [DONE]\n\n", "data: a\r\n\r\n", ": c\n\nevent: e\ndata:b\ndata\n\n",
		"data: a\n\ndata: b", "\r\r\n\n\ndata: \r\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := readEvents(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		dec := ssestream.NewDecoder(&http.Response{Body: io.NopCloser(strings.NewReader(in)),
			Header: http.Header{"Content-Type": {"text/event-stream"}}})
		var want []string
		for dec.Next() {
			want = append(want, string(dec.Event().Data))
		}
		if dec.Err() != nil {
			t.Skip(dec.Err()) // a line over the decoder's own limit
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("events differ from openai-go's decoder (-want +got):\n%s", diff)
		}
		e := newEventReader(strings.NewReader(in))
		for {
			ready := e.ready()
			_, ok := e.next()
			if ready && !ok {
				t.Fatal("ready() but no next event")
			}
			if !ok {
				break
			}
		}
	})
}
