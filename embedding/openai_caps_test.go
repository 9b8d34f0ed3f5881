package embedding

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/tokenizer"
	"github.com/ragproxy/ragproxy/upstream"
)

// capsClock is the stand-in's and the pacer's clock; Sleep moves it, so that no test waits in real time.
type capsClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *capsClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *capsClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
	return ctx.Err()
}

// TestOpenAIKeepsToTheCaps runs the embedder against the stand-in, which refuses what OpenAI refuses: more than
// 2048 inputs, an input over 8192 tokens or a request over 300,000, counted with cl100k_base, and a request over
// the key's tokens-per-minute limit.
func TestOpenAIKeepsToTheCaps(t *testing.T) {
	cl100k, err := tokenizer.NewEncoding(tokenizer.CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	hindi := strings.Repeat("विश्वविद्यालय में प्रवेश के लिए आवेदन पत्र जमा करें। ", 40)
	many := make([]string, 3000)
	for i := range many {
		many[i] = "short text " + strings.Repeat("x", i%7)
	}
	long := []string{strings.Repeat("नमस्ते दुनिया ", 3000), "a short one"}
	heavy := make([]string, 200) // about 2,000 cl100k tokens each: 400k in all
	for i := range heavy {
		heavy[i] = hindi
	}
	tests := []struct {
		name       string
		texts      []string
		limits     openaitest.Limits
		minServed  int
		wantRefuse string // the refusal the embedder meets a few times and recovers from; "" for none
	}{
		{"more than 2048 inputs", many, openaitest.Limits{}, 2, ""},
		{"an input over 8192 tokens is cut", long, openaitest.Limits{}, 1, ""},
		// The first request is cut at 280k tokens, before the limit is known: refused as larger than the
		// whole limit, then split, and later requests are cut by the limit the headers stated.
		{"a key's TPM below the batch", heavy, openaitest.Limits{TPM: 60_000}, 4, "rate_limit_exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &capsClock{t: time.Unix(1_700_000_000, 0)}
			srv := openaitest.NewServer(openaitest.Config{Limits: tt.limits, Now: clock.Now})
			defer srv.Close()
			p := upstream.NewPacer(upstream.PacerConfig{Now: clock.Now, Sleep: clock.Sleep})
			e := NewOpenAI(OpenAIConfig{BaseURL: srv.URL(), Model: "text-embedding-3-small", Pacer: p})
			got, err := e.Embed(context.Background(), tt.texts)
			if err != nil {
				t.Fatalf("Embed: %v", err)
			}
			st := srv.Stats()
			t.Logf("%d texts in %d requests, %d tokens billed, refusals %v, %s on the stand-in's clock",
				len(tt.texts), st.Served["embeddings"], st.TotalTokens(), st.Refused, p.Waited())
			if len(got) != len(tt.texts) || st.Served["embeddings"] < tt.minServed {
				t.Errorf("%d vectors in %d requests, want %d in at least %d", len(got), st.Served["embeddings"], len(tt.texts), tt.minServed)
			}
			// Before the first answer states the limit, each of the Concurrency (2) first requests is refused as
			// too large; later, with two requests in flight, a reading may lag what was sent. Each refusal is
			// waited out, and there are fewer of them than requests served (no retry storm).
			for code, n := range st.Refused {
				if code != tt.wantRefuse || n >= st.Served["embeddings"] {
					t.Errorf("refused %d× %s for %d served", n, code, st.Served["embeddings"])
				}
			}
			want := 0
			for _, s := range tt.texts {
				want += min(cl100k.Count(s), 8192)
			}
			if int(e.TokensUsed()) != want || st.TotalTokens() != want {
				t.Errorf("TokensUsed %d, stand-in billed %d; want %d", e.TokensUsed(), st.TotalTokens(), want)
			}
		})
	}
}
