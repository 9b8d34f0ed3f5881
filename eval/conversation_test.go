package eval_test

import (
	"context"
	"testing"

	"github.com/ragproxy/ragproxy/eval"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/retrieval"
)

// TestConversationQuality holds the offline answers to follow-ups on the example site (testdata/conversations:
// "and for international students?" after in-state tuition, "what if i return it late?" after borrowing a
// laptop, and "and international?" after "and for out-of-state students?" after in-state tuition) to floors
// below what they are: read joined to the questions they follow up, with their own words weighing more, all of
// them hold the fact, 0.95 within the first 300 characters; read alone, with the earlier question only as a
// rewrite, 0.73 and 0.59. (The Berkeley guide's follow-ups are in TestBerkeleyDevQuality.)
func TestConversationQuality(t *testing.T) {
	r, _ := indextest.Shared(t)
	qs, err := eval.LoadQuestions("testdata/conversations/lakeshore.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range qs {
		if len(q.Before) == 0 {
			t.Fatalf("%s follows up nothing", q.ID)
		}
	}
	m, err := eval.Retrieve(context.Background(), r, retrieval.Heuristic{}, qs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d follow-ups: Hit@1 %.3f, MRR %.3f, fact in context %.3f, in the answer %.3f, in its first 300 %.3f, median %d characters",
		m.Questions, m.Hit[1], m.MRR, m.FactInContext, m.FactInAnswer, m.FactInLead, m.AnswerChars)
	if m.FactInAnswer < 0.95 || m.FactInLead < 0.9 || m.MRR < 0.9 {
		t.Errorf("follow-ups: fact in the answer %.3f (floor 0.95), in its first 300 %.3f (0.9), MRR %.3f (0.9)", m.FactInAnswer, m.FactInLead, m.MRR)
	}
}
