package grounding

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/server"
)

// BenchmarkHugeQuestionNeighbours measures what clients sending maximal questions (8 MB bodies, the default body
// limit) cost everyone else: four ordinary clients' throughput on a grounded offline server over the example
// index while two such clients send back to back, as a ratio to their throughput alone (throughput-ratio).
//
//	go test ./grounding -run X -bench HugeQuestionNeighbours -benchtime 3x
func BenchmarkHugeQuestionNeighbours(b *testing.B) {
	r, tok := exampleIndex(b)
	h := newHarness(b, server.Config{Grounder: &Grounder{Retriever: r, Tokenizer: tok, Offline: true}}, openaitest.Config{})
	legit := `{"messages":[{"role":"user","content":"how much is in-state tuition?"}]}`
	huge := `{"messages":[{"role":"user","content":"how much is in-state tuition? ` +
		strings.Repeat("please tell me more about the fees ", (8<<20-200)/35) + `"}]}`
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	post := func(body string) error {
		resp, err := client.Post(h.URL+"/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}
	// legitRate is the ordinary clients' requests a second over a fixed count of requests.
	legitRate := func() float64 {
		const perClient = 50
		start := time.Now()
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range perClient {
					if err := post(legit); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		return 4 * perClient / time.Since(start).Seconds()
	}
	legitRate() // warm up: connections, caches
	var ratios []float64
	for b.Loop() {
		alone := legitRate()
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		answered := make(chan struct{}, 2)
		for range 2 {
			wg.Go(func() {
				for i := 0; ctx.Err() == nil; i++ {
					_ = post(huge)
					if i == 0 {
						answered <- struct{}{}
					}
				}
			})
		}
		// Each huge client has had one answer and sent its next question: both are under way, back to back.
		<-answered
		<-answered
		loaded := legitRate()
		cancel()
		wg.Wait()
		ratios = append(ratios, loaded/alone)
	}
	sum := 0.0
	for _, r := range ratios {
		sum += r
	}
	b.ReportMetric(sum/float64(len(ratios)), "throughput-ratio")
}
