package grounding

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/faq"
	"github.com/ragproxy/ragproxy/server"
)

// TestQuestionReport checks what the Grounder tells the question log: an FAQ answer, a question nothing in the
// site answers, an answered one with its confidence and topic, and no report for a task.
func TestQuestionReport(t *testing.T) {
	r, tok := exampleIndex(t)
	g := &Grounder{Retriever: r, Tokenizer: tok, FAQ: exampleFAQ(t)}
	ask := func(text, task string) *server.QuestionReport {
		t.Helper()
		msgs := []compat.Message{compat.TextMessage("user", text)}
		gr, err := g.Ground(context.Background(), &server.GroundRequest{Model: "ragproxy", Messages: msgs,
			Request: &compat.ChatRequest{Messages: msgs}, Task: task})
		if err != nil {
			t.Fatal(err)
		}
		if gr == nil {
			return nil
		}
		return gr.Question
	}
	if q := ask("When do fall 2024 classes begin", ""); q == nil || q.Outcome != server.OutcomeFAQ ||
		q.Question != "When do fall 2024 classes begin" || q.Topic != "/academic-calendar/" {
		t.Errorf("FAQ answer reported %+v", q)
	}
	if q := ask("qwxz zzkv", ""); q == nil || q.Outcome != server.OutcomeUnanswered {
		t.Errorf("a question nothing answers reported %+v", q)
	}
	q := ask("how much is in-state tuition?", "")
	if q == nil || q.Outcome != server.OutcomeAnswered || q.Confidence <= 0 || q.Topic == "" || q.Standalone != "" {
		t.Errorf("an answered question reported %+v", q)
	}
	if q := ask("Generate a title", "title"); q != nil {
		t.Errorf("a task reported %+v", q)
	}
}

func TestTopic(t *testing.T) {
	for in, want := range map[string]string{
		"https://www.example.edu/en/library/hours.html": "/en/library/",
		"https://www.example.edu/en/library/":           "/en/library/",
		"https://www.example.edu/a/b/c/d/":              "/a/b/",
		"https://www.example.edu/tuition/":              "/tuition/",
		"https://www.example.edu/":                      "/",
		"https://www.example.edu/about.html":            "/",
	} {
		if got := Topic(in); got != want {
			t.Errorf("Topic(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLiveFAQ checks that an entry added while serving answers the next question directly, and that removing it
// stops that.
func TestLiveFAQ(t *testing.T) {
	r, tok := exampleIndex(t)
	live := NewLiveFAQ(nil, "")
	g := &Grounder{Retriever: r, Tokenizer: tok, LiveFAQ: live}
	ask := func() *server.Grounding {
		msgs := []compat.Message{compat.TextMessage("user", "Is there a shuttle from the train station to campus?")}
		gr, err := g.Ground(context.Background(), &server.GroundRequest{Model: "ragproxy", Messages: msgs,
			Request: &compat.ChatRequest{Messages: msgs}})
		if err != nil {
			t.Fatal(err)
		}
		return gr
	}
	if gr := ask(); gr != nil && gr.Question != nil && gr.Question.Outcome == server.OutcomeFAQ {
		t.Fatal("answered from an empty FAQ")
	}
	live.Set([]faq.Entry{{Question: "Is there a shuttle from the train station to campus?", Answer: "Yes, the 22 bus, hourly.",
		URL: "https://www.lakeshore-poly.example/visit/", Source: "admin"}})
	gr := ask()
	if gr == nil || gr.Answer == nil || !strings.HasPrefix(gr.Answer.Text, "Yes, the 22 bus, hourly.") || gr.Question.Outcome != server.OutcomeFAQ {
		t.Fatalf("after adding the entry: %+v", gr)
	}
	live.Set(nil)
	if gr := ask(); gr != nil && gr.Question != nil && gr.Question.Outcome == server.OutcomeFAQ {
		t.Error("answered from a removed entry")
	}
}

func TestLiveFAQVary(t *testing.T) {
	var zero LiveFAQ // not made by NewLiveFAQ: no entries until Set
	if zero.Added() != "" || zero.Matcher() != nil || zero.MatcherIn("de") != nil {
		t.Error("a zero LiveFAQ has entries")
	}
	if zero.Set([]faq.Entry{{Question: "q", Answer: "a", URL: "https://u.example/"}}); zero.Matcher() == nil || zero.Added() == "" {
		t.Error("a zero LiveFAQ did not take its entries")
	}
	live := NewLiveFAQ(nil, "")
	g := &Grounder{LiveFAQ: live}
	before := g.Vary(nil)
	live.Set([]faq.Entry{{Question: "q", Answer: "a", URL: "https://u.example/"}})
	added := g.Vary(nil)
	// The same entry in another language matches other questions: answers given before are not replayed.
	live.Set([]faq.Entry{{Question: "q", Answer: "a", URL: "https://u.example/", Lang: "de"}})
	german := g.Vary(nil)
	live.Set(nil)
	if before != "" || added == before || german == added || g.Vary(nil) != before {
		t.Errorf("Vary: %q before, %q with an entry, %q with it in German, %q after removing it", before, added, german, g.Vary(nil))
	}
}

// TestLiveFAQSiteLanguage checks that an entry that does not tell its language is read in the main language of
// the site being served, also after a reload to a site of another main language.
func TestLiveFAQSiteLanguage(t *testing.T) {
	live := NewLiveFAQ(nil, "en")
	live.Set([]faq.Entry{{Question: "Parkplätze?", Answer: "Parkplatz B.", URL: "https://u.example/"}})
	direct := func(m *faq.Matcher) bool {
		got, ok := m.Match("Parkplatz?")
		return ok && got.Score >= faq.DefaultDirectThreshold
	}
	digest := live.Added()
	if direct(live.MatcherIn("en")) {
		t.Error("read as English, the German forms met")
	}
	if !direct(live.MatcherIn("de")) || !direct(live.Matcher()) || !direct(live.MatcherIn("")) {
		t.Error("not read as German on a German site")
	}
	if live.Added() != digest {
		t.Error("the added entries' digest changed with the site's language")
	}
	// Entries added later are read in the language the site has now.
	live.Set([]faq.Entry{{Question: "Fahrräder?", Answer: "Hof C.", URL: "https://u.example/"}})
	if got, ok := live.Matcher().Match("Fahrrad?"); !ok || got.Score < faq.DefaultDirectThreshold {
		t.Errorf("an entry added after the change: %+v", got)
	}
}

// standaloneAnalyzer is a model's analysis that completes a follow-up from the conversation.
type standaloneAnalyzer struct{ rewrite string }

func (a standaloneAnalyzer) Analyze(_ context.Context, msgs []retrieval.Message) (retrieval.Analysis, error) {
	return retrieval.Analysis{Question: msgs[len(msgs)-1].Content, NeedsRetrieval: true, Source: "llm",
		Rewrites: []string{a.rewrite, a.rewrite, a.rewrite}}, nil
}

// TestQuestionReportStandalone checks that a follow-up is reported with the model's standalone form of it.
func TestQuestionReportStandalone(t *testing.T) {
	r, tok := exampleIndex(t)
	const standalone = "How much is out-of-state tuition?"
	g := &Grounder{Retriever: r, Tokenizer: tok, Analyzer: standaloneAnalyzer{standalone}, AnalysisBudget: time.Minute}
	msgs := []compat.Message{compat.TextMessage("user", "how much is in-state tuition?"),
		compat.TextMessage("assistant", "In-state tuition is $4,850."), compat.TextMessage("user", "and for out-of-state students?")}
	gr, err := g.Ground(context.Background(), &server.GroundRequest{Model: "ragproxy", Messages: msgs, Request: &compat.ChatRequest{Messages: msgs}})
	if err != nil {
		t.Fatal(err)
	}
	if gr == nil || gr.Question == nil || gr.Question.Question != "and for out-of-state students?" || gr.Question.Standalone != standalone {
		t.Errorf("reported %+v", gr)
	}
}

// TestOfflineFollowUp checks that without a model a follow-up that continues the question before it is answered
// for the two together: "and for out-of-state students?" after in-state tuition leads with the out-of-state
// row of the tuition table (read alone, it led with the financial aid page's "Out-of-state and international
// budgets use the tuition rates"), and is reported with its standalone form.
func TestOfflineFollowUp(t *testing.T) {
	r, tok := exampleIndex(t)
	g := &Grounder{Retriever: r, Tokenizer: tok, Offline: true}
	msgs := []compat.Message{compat.TextMessage("user", "how much is in-state tuition?"),
		compat.TextMessage("assistant", "In-state tuition is $4,850."), compat.TextMessage("user", "and for out-of-state students?")}
	gr, err := g.Ground(context.Background(), &server.GroundRequest{Model: "ragproxy", Messages: msgs, Request: &compat.ChatRequest{Messages: msgs}})
	if err != nil {
		t.Fatal(err)
	}
	if gr == nil || gr.Answer == nil || gr.Question == nil {
		t.Fatalf("grounded %+v", gr)
	}
	lead, _, _ := strings.Cut(gr.Answer.Text, "\n— ")
	if !strings.Contains(lead, "| Out-of-state | $9,700 |") || !strings.Contains(gr.Answer.Text, tuitionURL) {
		t.Errorf("the answer does not lead with the out-of-state row:\n%s", gr.Answer.Text)
	}
	if gr.Question.Question != "and for out-of-state students?" || gr.Question.Standalone != "how much is in-state tuition? and for out-of-state students?" {
		t.Errorf("reported %+v", gr.Question)
	}
	// A follow-up on another subject is answered on its subject: the permits' price, and no tuition row.
	msgs[2] = compat.TextMessage("user", "what about parking permits?")
	if gr, err = g.Ground(context.Background(), &server.GroundRequest{Model: "ragproxy", Messages: msgs, Request: &compat.ChatRequest{Messages: msgs}}); err != nil {
		t.Fatal(err)
	}
	if a := gr.Answer.Text; !strings.HasPrefix(a, "> - Student parking permits cost $180 per year") || strings.Contains(a, "In-state") {
		t.Errorf("the parking follow-up:\n%s", a)
	}
}
