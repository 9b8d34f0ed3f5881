package grounding

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/internal/ssetest"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/faq"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/tokenizer"
)

// exampleFAQ is the example site's operator FAQ.
func exampleFAQ(t *testing.T) *faq.Matcher {
	t.Helper()
	entries, err := faq.Load("../examples/faq.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return faq.NewMatcher(entries)
}

const calendarURL = "https://www.lakeshore-poly.example/academic-calendar/"

// TestFAQDirectAnswer checks that a question the FAQ matches closely is answered with the entry's answer and
// link, streamed and not, with no upstream call, cached like any answer, and counted.
func TestFAQDirectAnswer(t *testing.T) {
	r, tok := exampleIndex(t)
	var mu sync.Mutex
	kinds := map[string]int{}
	g := &Grounder{Retriever: r, Tokenizer: tok, FAQ: exampleFAQ(t), OnFAQ: func(_ context.Context, kind string) {
		mu.Lock()
		kinds[kind]++
		mu.Unlock()
	}}
	lru, err := cache.NewLRU(cache.LRUConfig{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, server.Config{Grounder: g, Cache: lru}, replying("an upstream answer"))
	const want = "Fall 2024 classes begin on Monday, August 26, 2024."
	for _, stream := range []string{"false", "true"} {
		body := `{"model":"ragproxy","temperature":0,"stream":` + stream + `,"messages":[{"role":"user","content":"When do fall 2024 classes begin"}]}`
		resp, out := h.post(t, "/chat/completions", body)
		if resp.StatusCode != 200 {
			t.Fatalf("stream %s: %d %s", stream, resp.StatusCode, out)
		}
		answer := ssetest.Answer(t, out)
		if !strings.HasPrefix(answer, want) || !strings.Contains(answer, "**Sources**\n- [Academic Calendar 2024-25]("+calendarURL+")") {
			t.Errorf("stream %s: answer %q, want the FAQ's answer and its source", stream, answer)
		}
		if !strings.Contains(out, `"url_citation"`) {
			t.Errorf("stream %s: no url_citation annotation: %.400s", stream, out)
		}
		if resp, _ := h.post(t, "/chat/completions", body); resp.Header.Get("X-Cache") != "HIT" {
			t.Errorf("stream %s: a repeated FAQ question was not served from the cache: x-cache %q", stream, resp.Header.Get("X-Cache"))
		}
	}
	if n := len(h.Fake.Requests()); n != 0 {
		t.Errorf("the upstream saw %d requests for FAQ answers, want 0", n)
	}
	// The cache keys answers regardless of streaming, so it answered everything after the first.
	if kinds[FAQDirect] != 1 {
		t.Errorf("direct answers counted %v, want 1 (the cache answered the others)", kinds)
	}
}

// TestFAQEvidence checks that a weaker match goes first in the context for the model, whose link to its page
// then survives the link policy, and that a near miss is not answered from the FAQ.
func TestFAQEvidence(t *testing.T) {
	r, tok := exampleIndex(t)
	var kinds []string
	g := &Grounder{Retriever: r, Tokenizer: tok, FAQ: exampleFAQ(t),
		OnFAQ: func(_ context.Context, kind string) { kinds = append(kinds, kind) }}
	h := newHarness(t, server.Config{Grounder: g}, replying("Classes begin August 26 ([calendar]("+calendarURL+"))."))
	// "what day" for "when", "courses commence" for "classes begin": a paraphrase below the direct threshold.
	resp, out := h.post(t, "/chat/completions", `{"model":"ragproxy","messages":[{"role":"user","content":"what day do fall 2024 courses commence?"}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, out)
	}
	reqs := h.Fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("upstream saw %d requests, want 1", len(reqs))
	}
	sys := reqs[0].Messages[0].Text()
	i := strings.Index(sys, "## Frequently asked question: When do fall 2024 classes begin?")
	if i < 0 || i > strings.Index(sys, "<context>")+20 || !strings.Contains(sys, "The site's answer: Fall 2024 classes begin on Monday, August 26, 2024.") {
		t.Errorf("the FAQ entry does not lead the context: %.600s", sys)
	}
	if answer := ssetest.Answer(t, out); !strings.Contains(answer, "[calendar]("+calendarURL+")") {
		t.Errorf("the link to the FAQ's page was removed: %q", answer)
	}
	if len(kinds) != 1 || kinds[0] != FAQEvidence {
		t.Errorf("kinds = %v, want one evidence", kinds)
	}

	// A near miss (spring, not fall) is neither answered directly nor, here, strong enough to lead.
	h.post(t, "/chat/completions", `{"model":"ragproxy","messages":[{"role":"user","content":"when do spring 2025 classes begin?"}]}`)
	if reqs := h.Fake.Requests(); len(reqs) != 2 {
		t.Fatalf("the near miss did not go upstream: %d requests", len(reqs))
	}
	for _, k := range kinds[1:] {
		if k == FAQDirect {
			t.Error("a near miss got the FAQ's direct answer")
		}
	}
}

// TestSiteFAQ checks the FAQ entries an index's pages mark up: by default they lead the context and the model
// answers; with SiteFAQDirect a close match is answered from them; with SiteFAQOff they are ignored.
func TestSiteFAQ(t *testing.T) {
	r, tok := withLifeFAQ(t, "", index.FAQEntry{Question: "How many boats does the sailing club own?",
		Answer: "The sailing club owns 12 dinghies.", URL: lifeURL + "#sailing", Source: "heading"})
	const ask = `{"model":"ragproxy","messages":[{"role":"user","content":"how many boats does the sailing club own"}]}`
	for _, c := range []struct {
		name     string
		use      SiteFAQUse
		upstream bool // the model answers
		inPrompt bool // the entry leads the context
	}{
		{"evidence by default", SiteFAQEvidence, true, true},
		{"direct", SiteFAQDirect, false, false},
		{"off", SiteFAQOff, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, server.Config{Grounder: &Grounder{Retriever: r, Tokenizer: tok, SiteFAQ: c.use}}, replying("an answer"))
			_, out := h.post(t, "/chat/completions", ask)
			reqs := h.Fake.Requests()
			if (len(reqs) == 1) != c.upstream {
				t.Fatalf("upstream requests = %d, want upstream %v", len(reqs), c.upstream)
			}
			if !c.upstream {
				if a := ssetest.Answer(t, out); !strings.HasPrefix(a, "The sailing club owns 12 dinghies.") || !strings.Contains(a, lifeURL+"#sailing") {
					t.Errorf("direct answer = %q", a)
				}
				return
			}
			led := strings.Contains(reqs[0].Messages[0].Text(), "## Frequently asked question: How many boats does the sailing club own?")
			if led != c.inPrompt {
				t.Errorf("the site's entry leads the context: %v, want %v", led, c.inPrompt)
			}
		})
	}
}

// TestSiteFAQInPageLanguage checks that an entry a German page marks up is read as German: a question that writes
// its words in other forms ("Segelclub" for "Segelclubs", "vom" for "des") is answered from it directly.
func TestSiteFAQInPageLanguage(t *testing.T) {
	r, tok := withLifeFAQ(t, "de", index.FAQEntry{Question: "Wo liegen die Boote des Segelclubs?",
		Answer: "Die Boote liegen am Nordufer.", URL: lifeURL + "#segeln", Source: "heading"})
	h := newHarness(t, server.Config{Grounder: &Grounder{Retriever: r, Tokenizer: tok, SiteFAQ: SiteFAQDirect}}, replying("an answer"))
	_, out := h.post(t, "/chat/completions", `{"model":"ragproxy","messages":[{"role":"user","content":"Wo liegen denn die Boote vom Segelclub?"}]}`)
	if n := len(h.Fake.Requests()); n != 0 {
		t.Fatalf("the question went upstream (%d requests): the German entry did not match", n)
	}
	if a := ssetest.Answer(t, out); !strings.HasPrefix(a, "Die Boote liegen am Nordufer.") {
		t.Errorf("direct answer = %q", a)
	}
}

// lifeURL is the example site's student life page, which the site FAQ tests give entries.
const lifeURL = "https://www.lakeshore-poly.example/student-life/"

// withLifeFAQ is a retriever of the example index whose student life page marks up entries, in lang when set.
func withLifeFAQ(t *testing.T, lang string, entries ...index.FAQEntry) (*retrieval.Retriever, *tokenizer.Tokenizer) {
	t.Helper()
	base, tok := exampleIndex(t)
	ix := *base.Index()
	ix.Pages = slices.Clone(ix.Pages)
	p, ok := ix.PageByURL(lifeURL)
	if !ok {
		t.Fatal("no student life page")
	}
	if lang != "" {
		p.Lang = lang
	}
	p.FAQ = entries
	emb, err := retrieval.EmbedderFor(&ix, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := retrieval.New(&ix, emb, tok, base.Config())
	if err != nil {
		t.Fatal(err)
	}
	return r, tok
}
