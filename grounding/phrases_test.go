package grounding

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/retrieval"
)

func TestOwnTextsFollowTheQuestionsLanguage(t *testing.T) {
	pages := []retrieval.PageHit{{URL: "https://example.org/de/absatz", Title: "Absätze"}}
	for lang, want := range map[string]string{
		"":   "I don't know: I couldn't find this in the site's pages. These pages are the closest I found:",
		"en": "I don't know",
		"de": "Ich weiß es nicht",
		"fr": "Je ne sais pas",
		"es": "No lo sé",
		"it": "Non lo so",
		"pt": "Não sei",
		"ru": "Не знаю",
		"ja": "わかりません",
		"zh": "我不知道",
		"pl": "I don't know", // a language ragproxy does not speak: English
	} {
		got := DontKnow(&retrieval.Result{Lang: lang, Pages: pages}, 3)
		if !strings.HasPrefix(got, want) {
			t.Errorf("%q: %q does not start with %q", lang, got, want)
		}
	}
	src := []Source{{URL: "https://example.org/ja/", Title: "設定"}}
	if got := SourcesMarkdownIn("ja-JP", src); !strings.HasPrefix(got, "\n\n**出典**\n") {
		t.Errorf("Japanese sources: %q", got)
	}
	if SourcesMarkdownIn("en", src) != SourcesMarkdown(src) || !strings.HasPrefix(SourcesMarkdown(src), "\n\n**Sources**\n") {
		t.Error("the English Sources list changed")
	}
	// An answer's prose ends before its Sources list in any language.
	if got := proseOf("Antwort." + SourcesMarkdownIn("de", src)); got != "Antwort." {
		t.Errorf("prose of a German answer: %q", got)
	}
}

func TestGroundingPromptAsksForTheQuestionsLanguage(t *testing.T) {
	res := &retrieval.Result{Context: "ctx\n"}
	if got, want := SystemPrompt("Docs", res), fmt.Sprintf(GroundingPrompt, "Docs", "ctx\n"); got != want {
		t.Errorf("the English prompt changed:\n%s", got)
	}
	res.Lang = "de"
	got := SystemPrompt("Docs", res)
	rule := "- The question is in German: answer in German, whatever the language of the context.\n\n<context>\nctx\n</context>"
	if !strings.HasSuffix(got, rule) {
		t.Errorf("German prompt lacks the rule before its context:\n%s", got)
	}
	res.Lang = "ja"
	if got := SystemPrompt("Docs", res); !strings.Contains(got, "answer in Japanese") {
		t.Errorf("Japanese prompt: %s", got)
	}
}
