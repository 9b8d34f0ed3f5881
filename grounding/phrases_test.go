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
		"":      "I don't know: I couldn't find this in the site's pages. These pages are the closest I found:",
		"en":    "I don't know",
		"de":    "Ich weiß es nicht",
		"fr":    "Je ne sais pas",
		"es":    "No lo sé",
		"it":    "Non lo so",
		"pt":    "Não sei",
		"ru":    "Не знаю",
		"ja":    "わかりません",
		"zh":    "我不知道",
		"ca":    "No ho sé",
		"id":    "Saya tidak tahu",
		"nl":    "Ik weet het niet",
		"sv":    "Jag vet inte",
		"nb-NO": "Jeg vet ikke", // Norwegian Bokmål, read as "no"
		"da":    "Jeg ved det ikke",
		"pl":    "Nie wiem",
		"fi":    "I don't know", // a language ragproxy does not speak: English
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

// On an English site every question is read as English; ragproxy still writes its own texts, and asks the model
// to answer, in the language the visitor surely wrote in, and in English when it is not sure.
func TestVisitorsLanguageOnAnEnglishSite(t *testing.T) {
	pages := []retrieval.PageHit{{URL: "https://example.org/password", Title: "Passwords"}}
	for q, want := range map[string]string{
		"Wie kann ich mein Passwort ändern, wenn ich es vergessen habe?": "Ich weiß es nicht",
		"¿Cómo cambio mi contraseña si la olvidé?":                       "No lo sé",
		"Как поменять пароль, если я его забыл?":                         "Не знаю",
		"bagaimana cara mengganti kata sandi kalau saya lupa?":           "Saya tidak tahu",
		"パスワードを忘れたらどうすればいいですか？":                                          "わかりません",
		"how do i change my password if i forgot it?":                    "I don't know",
		"passwort reset": "I don't know", // not sure: English
	} {
		res := &retrieval.Result{Lang: "en", Query: q, Pages: pages}
		if got := DontKnow(res, 3); !strings.HasPrefix(got, want) {
			t.Errorf("%q: %q does not start with %q", q, got, want)
		}
	}
	res := &retrieval.Result{Lang: "en", Query: "Wie kann ich mein Passwort ändern, wenn ich es vergessen habe?", Context: "ctx\n"}
	if got := SystemPrompt("Docs", res); !strings.Contains(got, "answer in German") {
		t.Errorf("an English site's prompt for a German question lacks the rule:\n%s", got)
	}
	// A language ragproxy has no texts in is still the answer's: English texts around it, not the closest
	// language it speaks (a Norwegian question was German to a choice among those, before Norwegian had texts).
	res.Query = "miten vaihdan salasanani, jos olen unohtanut sen?"
	if got := SystemPrompt("Docs", res); !strings.Contains(got, "answer in Finnish") {
		t.Errorf("an English site's prompt for a Finnish question lacks the rule:\n%s", got)
	}
	if got := DontKnow(res, 3); !strings.HasPrefix(got, "I don't know") {
		t.Errorf("a Finnish question's own texts: %q, want English", got)
	}
	res.Query = "hvordan bytter jeg passordet mitt hvis jeg har glemt det?"
	if got := DontKnow(res, 3); !strings.HasPrefix(got, "Jeg vet ikke") || !strings.Contains(SystemPrompt("Docs", res), "answer in Norwegian") {
		t.Errorf("a Norwegian question's own texts: %q, and its prompt's rule", got)
	}
	res.Query = "اگه رمزم رو فراموش کنم چطوری می‌تونم عوضش کنم؟" // Persian, not Arabic, whose script it shares
	if got := SystemPrompt("Docs", res); !strings.Contains(got, "answer in Persian") {
		t.Errorf("an English site's prompt for a Persian question lacks the rule:\n%s", got)
	}
	res.Lang = "fr" // retrieval's reading among the site's languages stands when it is not English
	if got := DontKnow(res, 3); !strings.HasPrefix(got, "Je ne sais pas") {
		t.Errorf("a French reading: %q", got)
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
