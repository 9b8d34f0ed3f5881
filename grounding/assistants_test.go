package grounding

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/server"
)

const nursingPrefix = "https://www.lakeshore-poly.example/programs/nursing/"

// nursingGrounder serves the example site as "lakeshore" and its nursing programme as the assistant "nursing".
func nursingGrounder(t *testing.T, offline bool) *Grounder {
	t.Helper()
	r, tok := exampleIndex(t)
	s, err := retrieval.NewScope("/programs/nursing/")
	if err != nil {
		t.Fatal(err)
	}
	return &Grounder{Retriever: r, Tokenizer: tok, SiteName: "Lakeshore Polytechnic", Model: "lakeshore", Offline: offline,
		Assistants: []Assistant{{Name: "nursing", SiteName: "Lakeshore Polytechnic — Nursing", Scope: s}}}
}

var contextURLRE = regexp.MustCompile(`(?m)^URL: (\S+)$`)

// TestAssistantThroughGateway serves two models: a request to the assistant sends upstream a context of its
// pages alone, under its name; the same request to the whole-site model gets other pages, and the response cache
// keeps the two apart.
func TestAssistantThroughGateway(t *testing.T) {
	g := nursingGrounder(t, false)
	lru, err := cache.NewLRU(cache.LRUConfig{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, server.Config{Grounder: g, Cache: lru,
		Models: []server.ModelAlias{{ID: "lakeshore", Upstream: "gpt-4o-mini"}, {ID: "nursing", Upstream: "gpt-4o-mini"}}},
		replying("An answer."))

	resp, err := http.Get(h.URL + "/models")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var list struct{ Data []struct{ ID string } }
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	if diff := cmp.Diff([]string{"lakeshore", "nursing"}, ids); diff != "" {
		t.Errorf("/v1/models (-want +got):\n%s", diff)
	}

	const question = `"messages":[{"role":"user","content":"what are the admission requirements for the nursing program?"}],"temperature":0`
	ask := func(model string) (system string, hit bool) {
		t.Helper()
		before := len(h.Fake.Requests())
		resp, body := h.post(t, "/chat/completions", `{"model":"`+model+`",`+question+`}`)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d: %s", model, resp.StatusCode, body)
		}
		hit = resp.Header.Get("X-Cache") == "HIT"
		reqs := h.Fake.Requests()
		if hit {
			if len(reqs) != before {
				t.Errorf("%s: a cache hit went upstream", model)
			}
			return "", true
		}
		if len(reqs) != before+1 {
			t.Fatalf("%s: upstream saw %d new requests, want 1", model, len(reqs)-before)
		}
		return reqs[len(reqs)-1].Messages[0].Text(), false
	}

	sys, hit := ask("nursing")
	if hit {
		t.Fatal("first request was a cache hit")
	}
	urls := contextURLRE.FindAllStringSubmatch(sys, -1)
	if len(urls) == 0 {
		t.Fatalf("no pages in the assistant's context: %.400s", sys)
	}
	for _, m := range urls {
		if !strings.HasPrefix(m[1], nursingPrefix) {
			t.Errorf("the assistant's context holds %s", m[1])
		}
	}
	if !strings.Contains(sys, "Lakeshore Polytechnic — Nursing") {
		t.Errorf("the prompt does not name the assistant: %.300s", sys)
	}

	whole, hit := ask("lakeshore")
	if hit {
		t.Fatal("the whole-site model was answered from the assistant's cached answer")
	}
	outside := 0
	for _, m := range contextURLRE.FindAllStringSubmatch(whole, -1) {
		if !strings.HasPrefix(m[1], nursingPrefix) {
			outside++
		}
	}
	if outside == 0 || strings.Contains(whole, "Lakeshore Polytechnic — Nursing") {
		t.Errorf("the whole-site prompt has no page beyond the nursing programme, or names the assistant: %.300s", whole)
	}
	if _, hit := ask("nursing"); !hit {
		t.Error("the assistant's repeated request was not a cache hit (the cache test above cannot tell)")
	}
}

func TestAssistantOffline(t *testing.T) {
	g := nursingGrounder(t, true)
	h := newHarness(t, server.Config{Grounder: g,
		Models: []server.ModelAlias{{ID: "lakeshore"}, {ID: "nursing"}}}, replying("unused"))
	for _, tt := range []struct{ model, lead string }{
		{"nursing", "**Lakeshore Polytechnic — Nursing**\n\n"},
		{"lakeshore", "> "}, // the whole site's answer leads with the quote that answers
	} {
		resp, body := h.post(t, "/chat/completions", `{"model":"`+tt.model+`","messages":[{"role":"user","content":"how much is tuition for international students?"}]}`)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		var out struct {
			Model   string
			Choices []struct{ Message struct{ Content string } }
		}
		if err := json.Unmarshal([]byte(body), &out); err != nil || len(out.Choices) != 1 {
			t.Fatalf("body %s: %v", body, err)
		}
		content := out.Choices[0].Message.Content
		if out.Model != tt.model || !strings.HasPrefix(content, tt.lead) {
			t.Errorf("%s: answer of model %q starts %.80q, want %q", tt.model, out.Model, content, tt.lead)
		}
		links := regexp.MustCompile(`\]\((https://[^)]+)\)`).FindAllStringSubmatch(content, -1)
		if len(links) == 0 {
			t.Errorf("%s: no links in %q", tt.model, content)
		}
		for _, l := range links {
			if in := strings.HasPrefix(l[1], nursingPrefix); tt.model == "nursing" && !in {
				t.Errorf("the assistant's answer links %s", l[1])
			}
		}
		if tt.model == "lakeshore" && !strings.Contains(content, tuitionURL) {
			t.Errorf("the whole-site answer does not link the tuition page: %q", content)
		}
	}
}

func TestRetrieveAsAssistant(t *testing.T) {
	g := nursingGrounder(t, true)
	h := newHarness(t, server.Config{Grounder: g, Models: []server.ModelAlias{{ID: "lakeshore"}, {ID: "nursing"}}}, replying("unused"))
	pages := func(model string) []string {
		t.Helper()
		body := `{"query":"how much is tuition for international students?"`
		if model != "" {
			body += `,"model":"` + model + `"`
		}
		resp, out := h.post(t, "/retrieve", body+"}")
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d: %s", model, resp.StatusCode, out)
		}
		var res struct{ Pages []struct{ URL string } }
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatal(err)
		}
		var urls []string
		for _, p := range res.Pages {
			urls = append(urls, p.URL)
		}
		return urls
	}
	scoped := pages("nursing")
	if len(scoped) == 0 {
		t.Fatal("the assistant retrieved nothing")
	}
	for _, u := range scoped {
		if !strings.HasPrefix(u, nursingPrefix) {
			t.Errorf("the assistant retrieved %s", u)
		}
	}
	for _, model := range []string{"", "lakeshore"} {
		if got := pages(model); !slices.Contains(got, tuitionURL) {
			t.Errorf("model %q: %v lacks the tuition page", model, got)
		}
	}
	resp, body := h.post(t, "/retrieve", `{"query":"tuition","model":"no-such-model"}`)
	if resp.StatusCode != 404 || !strings.Contains(body, "model_not_found") {
		t.Errorf("unknown model: status %d: %s", resp.StatusCode, body)
	}
}

// TestAssistantFollowsVersion checks that an assistant's retriever belongs to the version the request acquired:
// another retriever (a reloaded index) gets a scoped retriever of its own, the first one's is not reused.
func TestAssistantFollowsVersion(t *testing.T) {
	g := nursingGrounder(t, true)
	v1 := g.Retriever.(*retrieval.Retriever)
	v2 := v1.WithConfig(retrieval.Config{KeepPages: 3})
	for _, v := range []*retrieval.Retriever{v1, v2, v1} {
		got := g.retrieverFor(v, "nursing")
		if got.Scope() == nil || got.Config().KeepPages != v.Config().KeepPages || got.Index() != v.Index() {
			t.Errorf("scoped retriever of a version with keep-pages %d has scope %v, keep-pages %d", v.Config().KeepPages,
				got.Scope(), got.Config().KeepPages)
		}
		if g.retrieverFor(v, "lakeshore") != v {
			t.Error("the whole-site model got another retriever")
		}
	}
	// While requests of two versions interleave (a reload), each version's scoped retriever is built once.
	a, b := g.retrieverFor(v1, "nursing"), g.retrieverFor(v2, "nursing")
	if g.retrieverFor(v1, "nursing") != a || g.retrieverFor(v2, "nursing") != b || a == b {
		t.Error("scoped retrievers are rebuilt as requests of two versions alternate")
	}
}

// TestAssistantSkipsOtherFAQs asks the FAQ's calendar question: the whole site answers it from the FAQ, the
// nursing assistant does not, since the entry's page is not one of its pages.
func TestAssistantSkipsOtherFAQs(t *testing.T) {
	g := nursingGrounder(t, true)
	g.FAQ = exampleFAQ(t)
	h := newHarness(t, server.Config{Grounder: g, Models: []server.ModelAlias{{ID: "lakeshore"}, {ID: "nursing"}}}, replying("unused"))
	const want = "Fall 2024 classes begin on Monday, August 26, 2024."
	for _, tt := range []struct {
		model string
		faq   bool
	}{{"lakeshore", true}, {"nursing", false}} {
		resp, out := h.post(t, "/chat/completions", `{"model":"`+tt.model+`","messages":[{"role":"user","content":"When do fall 2024 classes begin"}]}`)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", tt.model, resp.StatusCode, out)
		}
		var body struct {
			Choices []struct{ Message struct{ Content string } }
		}
		if err := json.Unmarshal([]byte(out), &body); err != nil || len(body.Choices) != 1 {
			t.Fatalf("%s: %s: %v", tt.model, out, err)
		}
		content := body.Choices[0].Message.Content
		if got := strings.HasPrefix(content, want); got != tt.faq {
			t.Errorf("%s: answered from the FAQ %v, want %v: %.200q", tt.model, got, tt.faq, content)
		}
		if !tt.faq && strings.Contains(content, calendarURL) {
			t.Errorf("%s links the calendar: %q", tt.model, content)
		}
	}
}

// siteRecorder is an analyzer that records the site name each analysis was asked for.
type siteRecorder struct{ sites []string }

func (s *siteRecorder) Analyze(ctx context.Context, msgs []retrieval.Message) (retrieval.Analysis, error) {
	s.sites = append(s.sites, retrieval.SiteNameOf(ctx))
	a, err := retrieval.Heuristic{}.Analyze(ctx, msgs)
	a.Source = "llm" // cached, as a model's analysis is
	return a, err
}

// TestAssistantAnalysis checks that a conversation with an assistant is analysed for the assistant's part of
// the site, and that cached analyses of the same words for two assistants stay apart.
func TestAssistantAnalysis(t *testing.T) {
	g := nursingGrounder(t, false)
	rec := &siteRecorder{}
	lru, err := cache.NewLRU(cache.LRUConfig{})
	if err != nil {
		t.Fatal(err)
	}
	g.Analyzer = NewCachedAnalyzer(rec, lru, "gpt-4o-mini", 0)
	// A follow-up: a first-turn question that stands on its own is not sent to the analyser.
	msgs := []retrieval.Message{{Role: "user", Content: "tell me about the nursing programme"},
		{Role: "assistant", Content: "It is a four-year degree."}, {Role: "user", Content: "what are its clinical placement requirements?"}}
	for _, model := range []string{"nursing", "lakeshore", "nursing", "lakeshore"} {
		if _, _, err := g.SearchAs(context.Background(), model, msgs); err != nil {
			t.Fatal(err)
		}
	}
	// Each assistant's analysis is made once, then comes from the cache.
	want := []string{"Lakeshore Polytechnic — Nursing", "Lakeshore Polytechnic"}
	if diff := cmp.Diff(want, rec.sites); diff != "" {
		t.Errorf("sites analysed for (-want +got):\n%s", diff)
	}
}
