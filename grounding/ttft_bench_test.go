package grounding

import (
	"bufio"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/internal/corpustest"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/tokenizer"
)

// BenchmarkTimeToFirstToken compares the time to the first content chunk of a streamed answer through the plain
// pass-through and through grounding on the Berkeley index (heuristic analysis, retrieval, prompt), both in front
// of the same loopback fake upstream, alternating request by request. The difference is what retrieval adds.
func BenchmarkTimeToFirstToken(b *testing.B) {
	_, r, tok := berkeleyIndex(b)
	fake := openaitest.Config{NoRecord: true,
		Reply: func(*openaitest.Request) openaitest.Reply {
			return openaitest.Reply{Content: "An answer of a few words."}
		}}
	plain := newHarness(b, server.Config{}, fake)
	grounded := newHarness(b, server.Config{Grounder: &Grounder{Retriever: r, Tokenizer: tok}}, fake)
	questions := berkeleyQuestions()
	var tPlain, tGrounded []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		body := `{"model":"ragproxy","stream":true,"messages":[{"role":"user","content":"` + questions[i%len(questions)] + `"}]}`
		tPlain = append(tPlain, firstToken(b, plain.URL, body))
		tGrounded = append(tGrounded, firstToken(b, grounded.URL, body))
	}
	p50 := func(d []time.Duration) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[(len(d)-1)/2].Microseconds()) / 1000
	}
	pp, pg := p50(tPlain), p50(tGrounded)
	b.ReportMetric(pp, "passthrough-p50-ms")
	b.ReportMetric(pg, "grounded-p50-ms")
	b.ReportMetric(pg-pp, "extra-p50-ms")
}

// firstToken posts a streaming request and returns the time until the first chunk with content arrives.
func firstToken(b *testing.B, base, body string) time.Duration {
	start := time.Now()
	resp, err := http.Post(base+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var took time.Duration
	for sc.Scan() {
		if took == 0 && strings.Contains(sc.Text(), `"content":"`) && !strings.Contains(sc.Text(), `"content":""`) {
			took = time.Since(start)
		}
	}
	if took == 0 {
		b.Fatal("no content chunk")
	}
	return took
}

// berkeleyIndex builds the Berkeley index into a temporary directory and opens it, or skips b.
func berkeleyIndex(b *testing.B) (dir string, r *retrieval.Retriever, tok *tokenizer.Tokenizer) {
	corpus := corpustest.Dir(b)
	dir = b.TempDir()
	indextest.Build(b, corpus, corpustest.BaseURL, dir)
	r, tok = indextest.Open(b, dir)
	return dir, r, tok
}

// berkeleyQuestions are questions over the Berkeley guide for the benchmarks that stream answers.
func berkeleyQuestions() []string {
	return []string{"who is the chair of the economics department?", "how much are tuition and fees for an undergrad",
		"what is the american cultures requirement?", "how many units is the master of information and data science?"}
}
