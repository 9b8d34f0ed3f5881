package retrieval

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/llm"
)

func TestAnalysisRewritesInThePagesLanguage(t *testing.T) {
	var systems []string
	ask := func(_ context.Context, p llm.Prompt) (llm.Reply, error) {
		systems = append(systems, p.System)
		return llm.Reply{Text: `{"retrieval_needed":true,"rewrites":["a","b","c"]}`}, nil
	}
	a := &LLMAnalyzer{Ask: ask, SiteName: "Docs"}
	msgs := []Message{{Role: "user", Content: "how do I number lines?"}}
	for _, langs := range [][]string{nil, {"en"}, {"de", "en"}, {"ja"}} {
		if _, err := a.Analyze(WithSiteLanguages(context.Background(), langs), msgs); err != nil {
			t.Fatal(err)
		}
	}
	english := fmt.Sprintf(AnalysisPrompt, " for Docs")
	if systems[0] != english || systems[1] != english {
		t.Errorf("an English site's analysis prompt changed: %q", systems[1])
	}
	if want := "written in German, English: write each search query in the language of the pages that would answer it (German when unsure)"; !strings.Contains(systems[2], want) {
		t.Errorf("German and English site: %q", systems[2])
	}
	if !strings.Contains(systems[3], "written in Japanese") {
		t.Errorf("Japanese site: %q", systems[3])
	}
}
