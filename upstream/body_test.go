package upstream_test

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/upstream"
)

// countingConn counts the Write calls made on a connection.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestRequestGoesOutInOneWrite checks that a chat request's headers and body reach the connection in one write
// call, streamed or not: with the SDK's own body reader, net/http flushed the headers first and wrote the body
// after them, two calls (and, on a real network, often two packets) for every request.
func TestRequestGoesOutInOneWrite(t *testing.T) {
	fake := openaitest.NewServer(openaitest.Config{})
	defer fake.Close()
	var writes atomic.Int64
	tr := upstream.NewTransport(4)
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: c, writes: &writes}, nil
	}
	c, err := upstream.New(upstream.Config{Primary: upstream.Endpoint{BaseURL: fake.URL(), Model: "gpt-4o-mini"},
		HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, body := range []string{
		`{"messages":[{"role":"user","content":"one two three"}]}`,
		`{"stream":true,"messages":[{"role":"user","content":"one two three"}]}`,
	} {
		req, err := compat.DecodeChatRequest([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		before := writes.Load()
		if req.Stream {
			s, _, err := c.Stream(ctx, &upstream.Call{Request: req})
			if err != nil {
				t.Fatal(err)
			}
			for s.Next() {
			}
			s.Close()
			if s.Err() != nil {
				t.Fatal(s.Err())
			}
		} else if _, _, err := c.Complete(ctx, &upstream.Call{Request: req}); err != nil {
			t.Fatal(err)
		}
		if n := writes.Load() - before; n != 1 {
			t.Errorf("stream=%v: the request took %d writes on its connection, want 1", req.Stream, n)
		}
	}
	if got := fake.Requests(); len(got) != 2 {
		t.Fatalf("the fake saw %d requests, want 2", len(got))
	}
}
