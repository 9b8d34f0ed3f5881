package grounding

import (
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/upstream"
)

// BenchmarkTimeToFirstTokenOnline measures the time to the first content chunk of streamed grounded answers in
// the real mode, the model's query analysis included, against a stand-in upstream whose every answer takes a
// fixed time to its first token (100 ms), on the example site's index. It reports the p50 of the upstream asked
// directly and through the proxy, for first-turn questions that stand on their own and for follow-ups, with an
// analysis as fast as the answers and with one far slower than the analysis budget (300 ms).
func BenchmarkTimeToFirstTokenOnline(b *testing.B) {
	const ttft, budget = 100 * time.Millisecond, 300 * time.Millisecond
	firstTurn := []string{
		`[{"role":"user","content":"how much is in-state tuition per semester?"}]`,
		`[{"role":"user","content":"When is the library open on Saturday?"}]`,
		`[{"role":"user","content":"what are the clinical placement requirements for nursing?"}]`,
	}
	followUps := []string{
		`[{"role":"user","content":"how much is in-state tuition per semester?"},{"role":"assistant","content":"It is $4,850."},{"role":"user","content":"and for out-of-state students?"}]`,
		`[{"role":"user","content":"When is the library open on Saturday?"},{"role":"assistant","content":"From 10 to 6."},{"role":"user","content":"what about Sunday?"}]`,
		`[{"role":"user","content":"tell me about the nursing programme"},{"role":"assistant","content":"It is a four-year degree."},{"role":"user","content":"what are its clinical placement requirements?"}]`,
	}
	for _, bc := range []struct {
		name     string
		analysis time.Duration
		convos   []string
	}{
		{"first-turn", ttft, firstTurn},
		{"follow-up", ttft, followUps},
		{"follow-up-slow-analysis", 10 * budget, followUps},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r, tok := exampleIndex(b)
			fake := openaitest.Config{NoRecord: true, Reply: func(req *openaitest.Request) openaitest.Reply {
				if len(req.Messages) > 0 && strings.HasPrefix(req.Messages[0].Text(), "You prepare search queries") {
					return openaitest.Reply{FirstTokenDelay: bc.analysis,
						Content: `{"retrieval_needed":true,"rewrites":["tuition per semester","library opening hours","nursing clinical placements"]}`}
				}
				return openaitest.Reply{FirstTokenDelay: ttft, Content: "An answer of a few words."}
			}}
			g := &Grounder{Retriever: r, Tokenizer: tok, AnalysisBudget: budget}
			h := newHarness(b, server.Config{Grounder: g}, fake)
			client, err := upstream.New(upstream.Config{Primary: upstream.Endpoint{BaseURL: h.Fake.URL(), Model: "gpt-4o-mini"}})
			if err != nil {
				b.Fatal(err)
			}
			g.Analyzer = &retrieval.LLMAnalyzer{Ask: upstream.Asker{Client: client}.Ask}
			var direct, proxied []time.Duration
			for i := 0; b.Loop(); i++ {
				body := `{"model":"gpt-4o-mini","stream":true,"messages":` + bc.convos[i%len(bc.convos)] + `}`
				direct = append(direct, firstToken(b, h.Fake.URL(), body))
				proxied = append(proxied, firstToken(b, h.URL, body))
			}
			p50 := func(d []time.Duration) float64 {
				sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
				return float64(d[(len(d)-1)/2].Microseconds()) / 1000
			}
			pd, pp := p50(direct), p50(proxied)
			b.ReportMetric(pd, "upstream-p50-ms")
			b.ReportMetric(pp, "proxied-p50-ms")
			b.ReportMetric(pp-pd, "extra-p50-ms")
		})
	}
}
