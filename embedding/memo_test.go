package embedding

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// countingEmbedder records the texts of every Embed call and fails the calls failNext says.
type countingEmbedder struct {
	Embedder
	mu       sync.Mutex
	calls    [][]string
	failNext int
	release  chan struct{} // when set, each call waits for it
}

var errEmbedFault = errors.New("embeddings unavailable")

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if c.release != nil {
		select {
		case <-c.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c.mu.Lock()
	c.calls = append(c.calls, slices.Clone(texts))
	fail := c.failNext > 0
	c.failNext--
	c.mu.Unlock()
	if fail {
		return nil, errEmbedFault
	}
	return c.Embedder.Embed(ctx, texts)
}

// TestMemo checks that a text is embedded once whether Start or Embed asked first, that the vectors are the
// wrapped embedder's, and that a failure reaches the caller and is asked again on the next Embed.
func TestMemo(t *testing.T) {
	ctx := context.Background()
	local := NewLocal(LocalConfig{Dimension: 64})
	inner := &countingEmbedder{Embedder: local, release: make(chan struct{})}
	m := NewMemo(inner)
	if m.Name() != local.Name() || m.Dimension() != local.Dimension() {
		t.Fatalf("memo is %s/%d, want the wrapped %s/%d", m.Name(), m.Dimension(), local.Name(), local.Dimension())
	}
	m.Start(ctx, "tuition fees", "fees for international students")
	m.Start(ctx, "tuition fees") // under way: no second request
	done := make(chan [][]float32)
	go func() {
		v, err := m.Embed(ctx, []string{"how much is tuition", "tuition fees", "fees for international students", "tuition fees"})
		if err != nil {
			t.Error(err)
		}
		done <- v
	}()
	close(inner.release)
	got := <-done
	want, err := local.Embed(ctx, []string{"how much is tuition", "tuition fees", "fees for international students", "tuition fees"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("vectors (-want +got):\n%s", diff)
	}
	if _, err := m.Embed(ctx, []string{"tuition fees", "how much is tuition"}); err != nil {
		t.Fatal(err)
	}
	inner.mu.Lock()
	calls := inner.calls
	inner.mu.Unlock()
	wantCalls := [][]string{{"tuition fees", "fees for international students"}, {"how much is tuition"}}
	slices.SortFunc(calls, func(a, b []string) int { return len(b) - len(a) })
	if diff := cmp.Diff(wantCalls, calls); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}

	inner.failNext = 1
	if _, err := m.Embed(ctx, []string{"library hours"}); !errors.Is(err, errEmbedFault) {
		t.Errorf("failing embedder: err = %v, want %v", err, errEmbedFault)
	}
	if v, err := m.Embed(ctx, []string{"library hours"}); err != nil || len(v) != 1 || len(v[0]) != 64 {
		t.Errorf("after a failure: %d vectors, err %v; want the text asked again", len(v), err)
	}
}

// TestMemoCancelled checks that a waiter whose context ends stops waiting for a Start that is still under way.
func TestMemoCancelled(t *testing.T) {
	inner := &countingEmbedder{Embedder: NewLocal(LocalConfig{Dimension: 16}), release: make(chan struct{})}
	defer close(inner.release)
	m := NewMemo(inner)
	m.Start(context.Background(), "slow")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Embed(ctx, []string{"slow"}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
