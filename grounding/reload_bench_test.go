package grounding

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/server"
)

// BenchmarkReloadLatency measures what switching index versions costs the streams in flight: eight clients stream
// grounded answers on the Berkeley index (about 150 ms each from a loopback fake upstream, ten each per op) while,
// in "reloading", the index is loaded again (on one core, retrieval.OpenGently) and swapped in once per op, as
// serve does when CURRENT changes. It reports the streams' p50 and p99 from request to last byte, failed
// streams, and the reloads done.
func BenchmarkReloadLatency(b *testing.B) {
	dir, r, tok := berkeleyIndex(b)
	fake := openaitest.Config{NoRecord: true, ChunkDelay: 5 * time.Millisecond,
		Reply: func(*openaitest.Request) openaitest.Reply {
			return openaitest.Reply{Content: strings.Repeat("word ", 30)}
		}}
	questions := berkeleyQuestions()
	for _, reloading := range []bool{false, true} {
		name := "steady"
		if reloading {
			name = "reloading"
		}
		b.Run(name, func(b *testing.B) {
			live := retrieval.NewLive(r, nil)
			h := newHarness(b, server.Config{Grounder: &Grounder{Retriever: live, Tokenizer: tok}}, fake)
			var times []time.Duration
			var failed, reloads atomic.Int64
			for b.Loop() {
				ctx, stop := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				if reloading {
					wg.Go(func() {
						select {
						case <-ctx.Done():
							return
						case <-time.After(200 * time.Millisecond): // the streams are under way
						}
						next, err := retrieval.OpenGently(dir, nil, tok, r.Config())
						if err != nil {
							b.Error(err)
							return
						}
						live.Swap(next, nil)
						reloads.Add(1)
					})
				}
				var mu sync.Mutex
				var clients sync.WaitGroup
				for c := range 8 {
					clients.Go(func() {
						for i := range 10 {
							q := questions[(c+i)%len(questions)]
							body := `{"model":"ragproxy","stream":true,"messages":[{"role":"user","content":"` + q + `"}]}`
							start := time.Now()
							ok := streamOnce(h.URL, body)
							took := time.Since(start)
							mu.Lock()
							times = append(times, took)
							mu.Unlock()
							if !ok {
								failed.Add(1)
							}
						}
					})
				}
				clients.Wait()
				stop()
				wg.Wait()
			}
			slices.Sort(times)
			at := func(q float64) float64 { return float64(times[int(q*float64(len(times)-1))].Microseconds()) / 1000 }
			b.ReportMetric(at(0.5), "p50-ms")
			b.ReportMetric(at(0.99), "p99-ms")
			b.ReportMetric(float64(failed.Load()), "failed")
			b.ReportMetric(float64(reloads.Load())/float64(b.N), "reloads/op")
		})
	}
}

// streamOnce posts a streaming request and reads it to the end; it reports whether the stream ended properly.
func streamOnce(base, body string) bool {
	resp, err := http.Post(base+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return err == nil && resp.StatusCode == http.StatusOK && strings.Contains(string(b), "data: [DONE]") &&
		!strings.Contains(string(b), `"error"`)
}
