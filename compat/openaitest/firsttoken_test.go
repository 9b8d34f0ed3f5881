package openaitest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestFirstTokenDelay checks that a stream's headers arrive before its first-token delay is over and that no
// chunk is written during it: the caller gets its 200 while the reply (an hour away) has not begun, and leaving
// then cancels it with nothing sent.
func TestFirstTokenDelay(t *testing.T) {
	s := NewServer(Config{Reply: func(*Request) Reply { return Reply{Content: "late words", FirstTokenDelay: time.Hour} }})
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	cancel()
	rec, err := s.Wait(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Canceled || rec.Chunks != 0 {
		t.Errorf("canceled %v after %d chunks, want a cancelled request with no chunk", rec.Canceled, rec.Chunks)
	}
}
