package retrieval

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/llm"
)

// asks is a fake llm.Ask: it answers every prompt with answer and records the prompts.
type asks struct {
	mu      sync.Mutex
	prompts []llm.Prompt
	answer  func(ctx context.Context) (llm.Reply, error)
}

func (a *asks) ask(ctx context.Context, p llm.Prompt) (llm.Reply, error) {
	a.mu.Lock()
	a.prompts = append(a.prompts, p)
	a.mu.Unlock()
	return a.answer(ctx)
}

// replying is a fake llm.Ask whose model answers text.
func replying(text string) *asks {
	return &asks{answer: func(context.Context) (llm.Reply, error) { return llm.Reply{Text: text}, nil }}
}

// heuristicFollowUp is the heuristic analysis of TestLLMAnalyzer's conversation, whose "it" refers to the major
// the question before named: it is read joined to that question.
var heuristicFollowUp = Analysis{Question: "who chairs it?", NeedsRetrieval: true, Source: "heuristic",
	Standalone: "tell me about the economics major who chairs it?",
	Rewrites:   []string{"tell me about the economics major who chairs it?", "tell economics major chairs"}}

func TestLLMAnalyzer(t *testing.T) {
	convo := []Message{
		{Role: "user", Content: "tell me about the economics major"},
		{Role: "assistant", Content: "It is a BA."},
		{Role: "user", Content: "who chairs it?"},
	}
	tests := []struct {
		name     string
		reply    string
		want     Analysis
		fallback bool
	}{
		// A follow-up is searched for joined to the question it follows up (Query), beside the model's rewrites.
		{"strict JSON", `{"retrieval_needed":true,"rewrites":["economics department chair","chair of economics","economics major contact"]}`,
			Analysis{Question: "who chairs it?", Standalone: heuristicFollowUp.Standalone, NeedsRetrieval: true, Source: "llm",
				Rewrites: []string{"economics department chair", "chair of economics", "economics major contact"}}, false},
		{"no retrieval needed", `{"retrieval_needed":false,"rewrites":["a","b","c"]}`,
			Analysis{Question: "who chairs it?", Standalone: heuristicFollowUp.Standalone, NeedsRetrieval: false, Source: "llm",
				Rewrites: []string{"a", "b", "c"}}, false},
		{"junk falls back", `I think you should search for economics.`, heuristicFollowUp, true},
		{"missing field falls back", `{"rewrites":["x"]}`, heuristicFollowUp, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := replying(tt.reply)
			var fellBack error
			a := &LLMAnalyzer{Ask: model.ask, OnFallback: func(err error) { fellBack = err }}
			got, err := a.Analyze(context.Background(), convo)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("analysis (-want +got):\n%s", diff)
			}
			if (fellBack != nil) != tt.fallback {
				t.Errorf("fallback error = %v, want fallback %v", fellBack, tt.fallback)
			}
			if len(model.prompts) != 1 {
				t.Fatalf("%d prompts, want 1", len(model.prompts))
			}
			p := model.prompts[0]
			if p.JSON == nil || p.JSON.Name != "query_analysis" || p.JSON.Definition["additionalProperties"] != false {
				t.Errorf("prompt did not ask for strict JSON: %+v", p.JSON)
			}
			if p.Model != "" || p.Temperature != 0 {
				t.Errorf("prompt asks for model %q at temperature %v; want the Ask's model at 0", p.Model, p.Temperature)
			}
			if !strings.Contains(p.User, "assistant: It is a BA.") {
				t.Errorf("the conversation was not passed: %q", p.User)
			}
		})
	}
}

// TestLLMAnalyzerNotFollowUp checks that a question of its own keeps the model's reading: no joined form.
func TestLLMAnalyzerNotFollowUp(t *testing.T) {
	model := replying(`{"retrieval_needed":true,"rewrites":["in-state tuition per semester","tuition fees","cost of tuition"]}`)
	a := &LLMAnalyzer{Ask: model.ask}
	got, err := a.Analyze(context.Background(), []Message{
		{Role: "user", Content: "where is the library?"},
		{Role: "assistant", Content: "On the main quad."},
		{Role: "user", Content: "how much is in-state tuition per semester?"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != "llm" || got.Standalone != "" || got.Query() != "how much is in-state tuition per semester?" {
		t.Errorf("analysis %+v: want the model's, with the question itself as its query", got)
	}
}

// TestLLMAnalyzerSickModel checks that analysis never stalls or fails an answer: a model that fails, or that does
// not answer, leaves the heuristic analysis, within the analysis deadline.
func TestLLMAnalyzerSickModel(t *testing.T) {
	errDown := errors.New("upstream down")
	tests := []struct {
		name   string
		answer func(ctx context.Context) (llm.Reply, error)
		want   error // what the fallback reports
	}{
		{"fails", func(context.Context) (llm.Reply, error) { return llm.Reply{}, errDown }, errDown},
		{"hangs", func(ctx context.Context) (llm.Reply, error) {
			if _, ok := ctx.Deadline(); !ok {
				return llm.Reply{}, errors.New("the analysis call has no deadline")
			}
			<-ctx.Done() // returns only because the analysis gave up
			return llm.Reply{}, ctx.Err()
		}, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fellBack error
			a := &LLMAnalyzer{Ask: (&asks{answer: tt.answer}).ask, Timeout: 50 * time.Millisecond,
				OnFallback: func(err error) { fellBack = err }}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			got, err := a.Analyze(ctx, []Message{{Role: "user", Content: "fees?"}})
			if err != nil || got.Source != "heuristic" || !got.NeedsRetrieval {
				t.Fatalf("Analyze = %+v, %v; want a heuristic analysis", got, err)
			}
			if ctx.Err() != nil {
				t.Fatal("analysis outlived its deadline")
			}
			if !errors.Is(fellBack, tt.want) {
				t.Errorf("fallback error = %v, want %v", fellBack, tt.want)
			}
		})
	}
}

func TestHeuristicAnalysis(t *testing.T) {
	msgs := []Message{
		{Role: "user", Content: "tell me about the economics major"},
		{Role: "assistant", Content: "It is ..."},
		{Role: "user", Content: "who is the chair?"},
	}
	a, err := Heuristic{}.Analyze(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	want := Analysis{Question: "who is the chair?", NeedsRetrieval: true, Source: "heuristic",
		Rewrites: []string{"who is the chair?", "tell me about the economics major who is the chair?", "chair"}}
	if diff := cmp.Diff(want, a); diff != "" {
		t.Errorf("analysis (-want +got):\n%s", diff)
	}
	if a.Query() != "who is the chair?" {
		t.Errorf("query %q, want the question", a.Query())
	}
	// A message that opens as a continuation is read joined to the one before: retrieval reads it whole, and not
	// the message alone, which asks the site nothing.
	msgs = []Message{
		{Role: "user", Content: "how much is in-state tuition?"},
		{Role: "assistant", Content: "$4,850 a semester."},
		{Role: "user", Content: "and for out-of-state students?"},
	}
	if a, err = (Heuristic{}).Analyze(context.Background(), msgs); err != nil {
		t.Fatal(err)
	}
	joined := "how much is in-state tuition? and for out-of-state students?"
	want = Analysis{Question: "and for out-of-state students?", NeedsRetrieval: true, Source: "heuristic", Standalone: joined,
		Rewrites: []string{joined, "much in-state tuition out-of-state students"}}
	if diff := cmp.Diff(want, a); diff != "" || a.Query() != joined {
		t.Errorf("follow-up analysis (-want +got):\n%s\nquery %q", diff, a.Query())
	}
	// One that refers to what the message before named is read joined to it too.
	msgs = []Message{{Role: "user", Content: "where is the library?"}, {Role: "user", Content: "what are its opening hours?"}}
	if a, _ := (Heuristic{}).Analyze(context.Background(), msgs); a.Standalone != "where is the library? what are its opening hours?" {
		t.Errorf("a follow-up that refers: %+v", a)
	}
	// A longer question with a pronoun names its subject itself: it is read as it is, the earlier one only a
	// rewrite.
	msgs = []Message{{Role: "user", Content: "when is spring break 2017"}, {Role: "user", Content: "how much extra does it cost to live in bowles hall?"}}
	if a, _ := (Heuristic{}).Analyze(context.Background(), msgs); a.Standalone != "" || a.Rewrites[0] != msgs[1].Content {
		t.Errorf("a question that names its subject: %+v", a)
	}
	// A follow-up of a follow-up joins back to the question that names the subject.
	msgs = []Message{{Role: "user", Content: "where is the library?"}, {Role: "user", Content: "how much is in-state tuition?"},
		{Role: "assistant", Content: "$4,850."}, {Role: "user", Content: "and out-of-state?"}, {Role: "user", Content: "and international?"}}
	if a, _ := (Heuristic{}).Analyze(context.Background(), msgs); a.Standalone != "how much is in-state tuition? and out-of-state? and international?" {
		t.Errorf("a follow-up of a follow-up: %q", a.Standalone)
	}
	// The first message of a conversation has nothing to continue.
	first := []Message{{Role: "user", Content: "and for out-of-state students?"}}
	if a, _ := (Heuristic{}).Analyze(context.Background(), first); a.Standalone != "" || a.Query() != "and for out-of-state students?" {
		t.Errorf("a first message: %+v", a)
	}
}

// A question's key terms leave out its own language's stopwords: English ones for an English question, German
// ones for a German question.
func TestKeyTermsInTheQuestionsLanguage(t *testing.T) {
	for q, want := range map[string]string{
		"how much is in-state tuition per semester?":             "much in-state tuition per semester",
		"Wie kann ich die Tastaturbelegung der Konsole ändern?":  "tastaturbelegung konsole ändern",
		"Comment lister les polices installées sur le système ?": "comment lister polices installées système",
	} {
		if got := keyTerms(q); got != want {
			t.Errorf("keyTerms(%q) = %q, want %q", q, got, want)
		}
	}
}

// TestLLMAnalyzerSiteName checks that the analysis prompt names the site the context names, before the
// analyzer's own.
func TestLLMAnalyzerSiteName(t *testing.T) {
	model := replying(`{"retrieval_needed":true,"rewrites":["a","b","c"]}`)
	a := &LLMAnalyzer{Ask: model.ask, SiteName: "Lakeshore Polytechnic"}
	msgs := []Message{{Role: "user", Content: "placement requirements?"}}
	for _, ctx := range []context.Context{context.Background(), WithSiteName(context.Background(), "Lakeshore Polytechnic — Nursing")} {
		if _, err := a.Analyze(ctx, msgs); err != nil {
			t.Fatal(err)
		}
	}
	if len(model.prompts) != 2 {
		t.Fatalf("%d prompts, want 2", len(model.prompts))
	}
	if p := model.prompts[0].System; !strings.Contains(p, "assistant for Lakeshore Polytechnic.") {
		t.Errorf("prompt without a site in the context = %q", p)
	}
	if p := model.prompts[1].System; !strings.Contains(p, "assistant for Lakeshore Polytechnic — Nursing.") {
		t.Errorf("prompt for the nursing assistant = %q", p)
	}
}

// TestRewriteScanner feeds an analysis to the scanner a byte at a time, as a stream would: each rewrite is
// emitted once, decoded, as soon as its closing quote arrives; a blank one is skipped, and only the first three
// strings count.
func TestRewriteScanner(t *testing.T) {
	text := `{"retrieval_needed": true, "rewrites": ["fees \"per\" unit", " ", "caf\u00e9 hours", "library, Sunday", "a fourth"]}`
	var got []string
	s := &rewriteScanner{emit: func(rw string) { got = append(got, rw) }}
	ends := map[string]int{}
	for i := 1; i <= len(text); i++ {
		n := len(got)
		s.feed(text[:i])
		if len(got) > n {
			ends[got[len(got)-1]] = i
		}
	}
	want := []string{`fees "per" unit`, "café hours"}
	if !slices.Equal(got, want) {
		t.Fatalf("emitted %q, want %q", got, want)
	}
	if i := ends[want[0]]; text[i-1] != '"' || !strings.HasSuffix(text[:i], `unit"`) {
		t.Errorf("first rewrite emitted at %d (%q), want just after its closing quote", i, text[:i])
	}
}
