package server

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat/openaitest"
)

// BenchmarkPassThrough measures what a streamed answer costs the whole process (the fake upstream, the proxy and
// 16 clients over loopback, as eval/overhead runs them) when the clients call the upstream directly and when
// they go through the proxy: the two sub-benchmarks' cpu-us/op (user and system CPU time per request, from
// getrusage) differ by what the proxy spends per request, and their ratio is the share of the direct path's
// throughput the proxy can keep on a machine whose cores are all busy. The answer is 20 one-word chunks with the
// usage chunk, read to the end of the body.
func BenchmarkPassThrough(b *testing.B) {
	answer := strings.TrimSpace(strings.Repeat("word ", 20))
	h := newHarness(b, harnessOpts{fake: openaitest.Config{NoRecord: true,
		Reply: func(*openaitest.Request) openaitest.Reply { return openaitest.Reply{Content: answer} }}})
	body := []byte(`{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"measure me"}]}`)
	for _, path := range []struct{ name, url string }{{"direct", h.Fake.URL()}, {"proxy", h.URL}} {
		b.Run(path.name, func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}}
			defer client.CloseIdleConnections()
			post := func(buf []byte) error {
				resp, err := client.Post(path.url+"/chat/completions", "application/json", bytes.NewReader(body))
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				n, err := io.CopyBuffer(io.Discard, resp.Body, buf)
				if err == nil && (resp.StatusCode != http.StatusOK || n < 100) {
					err = io.ErrUnexpectedEOF
				}
				return err
			}
			if err := post(make([]byte, 32<<10)); err != nil {
				b.Fatal(err)
			}
			b.SetParallelism(8) // 16 clients on 2 cores
			b.ReportAllocs()
			cpu := cpuTime()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				buf := make([]byte, 32<<10)
				for pb.Next() {
					if err := post(buf); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-us/op")
		})
	}
}

// cpuTime is the user and system CPU time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
