package eval_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/eval"
	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/retrieval"
)

// TestJudgeAnswers runs the answer evaluation against a fake model that answers with the retrieved context's
// first line of one question's fact and judges by substring, so the figures are known.
func TestJudgeAnswers(t *testing.T) {
	r, _ := indextest.Example(t)
	path := filepath.Join(t.TempDir(), "q.jsonl")
	os.WriteFile(path, examples.Questions, 0o644)
	qs, err := eval.LoadQuestions(path)
	if err != nil {
		t.Fatal(err)
	}
	qs = qs[:3]
	fake := openaitest.NewServer(openaitest.Config{Reply: func(req *openaitest.Request) openaitest.Reply {
		sys, user := req.Messages[0].Text(), req.Messages[len(req.Messages)-1].Text()
		if sys == eval.JudgePrompt {
			fact := between(user, "Reference fact: ", "\n")
			answer := user[strings.Index(user, "Answer:\n")+len("Answer:\n"):]
			if strings.Contains(answer, fact) {
				return openaitest.Reply{Content: `{"correct":true}`}
			}
			return openaitest.Reply{Content: `{"correct":false}`}
		}
		if !strings.Contains(sys, "<context>") {
			t.Errorf("answering request is not grounded: %.200s", sys)
		}
		if user == qs[0].Question { // the model knows only the first answer
			return openaitest.Reply{Content: "The answer is " + qs[0].Fact + "."}
		}
		return openaitest.Reply{Content: "I don't know."}
	}})
	defer fake.Close()
	j := &eval.Judge{Client: openai.NewClient(option.WithBaseURL(fake.URL()), option.WithAPIKey("k"))}
	got, err := j.Answers(context.Background(), r, retrieval.Heuristic{}, qs, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got.Total != 6 || got.Correct != 2 || len(got.Wrong) != 2 || got.Wrong[0].ID != qs[1].ID {
		t.Errorf("answers = %+v, want 2 of 6 correct and questions 2 and 3 wrong", got)
	}
	if n := len(fake.Requests()); n != 12 {
		t.Errorf("fake saw %d requests, want 6 answers and 6 judgements", n)
	}
}

func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i+len(from):]
	if j := strings.Index(s, to); j >= 0 {
		return s[:j]
	}
	return s
}
