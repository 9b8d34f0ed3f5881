package grounding

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/internal/corpustest"
	"github.com/ragproxy/ragproxy/server"
)

// BenchmarkRetrieveHTTP compares POST /v1/retrieve over loopback HTTP with the retriever called in-process, on
// the Berkeley index with the dev questions, alternating question by question, and reports each one's p50 and
// p99: the difference is what the HTTP path (request, analysis, response body) adds.
func BenchmarkRetrieveHTTP(b *testing.B) {
	_, r, tok := berkeleyIndex(b)
	h := newHarness(b, server.Config{Grounder: &Grounder{Retriever: r, Tokenizer: tok}}, openaitest.Config{NoRecord: true})
	var questions []string
	for _, q := range corpustest.Questions(b) {
		questions = append(questions, q.Question)
	}
	hc := &http.Client{}
	var overHTTP, inProcess []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		q := questions[i%len(questions)]
		body, _ := json.Marshal(map[string]string{"query": q})
		start := time.Now()
		resp, err := hc.Post(h.URL+"/retrieve", "application/json", strings.NewReader(string(body)))
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("retrieve %q: %v %s", q, err, resp.Status)
		}
		overHTTP = append(overHTTP, time.Since(start))
		start = time.Now()
		if _, err := r.Retrieve(context.Background(), q, nil); err != nil {
			b.Fatal(err)
		}
		inProcess = append(inProcess, time.Since(start))
	}
	pct := func(d []time.Duration, p float64) float64 {
		slices.Sort(d)
		return float64(d[int(p*float64(len(d)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(overHTTP, 0.5), "http-p50-ms")
	b.ReportMetric(pct(overHTTP, 0.99), "http-p99-ms")
	b.ReportMetric(pct(inProcess, 0.5), "inproc-p50-ms")
	b.ReportMetric(pct(inProcess, 0.99), "inproc-p99-ms")
}
