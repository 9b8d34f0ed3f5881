package server

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/internal/redistest"
)

// BenchmarkCacheHit measures a response-cache hit through the proxy, client
// to last byte over loopback HTTP, with the answer in Redis on loopback or
// in the in-process LRU, replayed as JSON and as a stream. The answer is
// about 2 KB of text with a Sources list and its annotation, like a grounded answer.
func BenchmarkCacheHit(b *testing.B) {
	answer := strings.Repeat("Enrolment for the autumn semester opens on 1 August. ", 40)
	backends := []struct {
		name string
		new  func(tb testing.TB) cache.Cache
	}{
		{"redis", func(tb testing.TB) cache.Cache { return newTestRedis(tb, redistest.URL(tb)) }},
		{"lru", func(tb testing.TB) cache.Cache { c, _ := cache.NewLRU(cache.LRUConfig{}); return c }},
	}
	for _, be := range backends {
		for _, stream := range []bool{false, true} {
			name := be.name + "/json"
			if stream {
				name = be.name + "/stream"
			}
			b.Run(name, func(b *testing.B) {
				g := &fakeGrounder{ground: func() *Grounding {
					return &Grounding{NewFilter: newUpperFilter}
				}}
				h := newCacheHarness(b, &cache.Tolerant{Cache: be.new(b)}, Config{Grounder: g},
					openaitest.Config{NoRecordBodies: true, Reply: func(*openaitest.Request) openaitest.Reply {
						return openaitest.Reply{Content: answer}
					}})
				body := []byte(`{"model":"ragproxy","temperature":0,"stream":` + boolJSON(stream) + `,` + cacheQuestion + `}`)
				client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
				post := func() string {
					resp, err := client.Post(h.URL+"/chat/completions", "application/json", bytes.NewReader(body))
					if err != nil {
						b.Fatal(err)
					}
					defer resp.Body.Close()
					if _, err := io.Copy(io.Discard, resp.Body); err != nil {
						b.Fatal(err)
					}
					return resp.Header.Get("X-Cache")
				}
				post() // stores the answer
				if got := post(); got != "HIT" {
					b.Fatalf("x-cache = %q, want HIT", got)
				}
				lat := make([]time.Duration, 0, b.N)
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					t := time.Now()
					post()
					lat = append(lat, time.Since(t))
				}
				b.StopTimer()
				if n := len(h.Fake.Requests()); n != 1 {
					b.Fatalf("upstream calls = %d, want 1", n)
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			})
		}
	}
}
