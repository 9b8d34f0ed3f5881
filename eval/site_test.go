package eval

import (
	"strings"
	"testing"
)

func TestBarsCheck(t *testing.T) {
	rep := func(name string, fact, hit8, mrr float64) Report {
		return Report{Questions: name, Retrieval: Metrics{FactInContext: fact, Hit: map[int]float64{8: hit8}, MRR: mrr}}
	}
	reps := []Report{rep("a.jsonl", 0.95, 1, 0.9), rep("b.jsonl", 0.9, 0.95, 0.8)}
	if err := (Bars{FactInContext: 0.9, Hit8: 0.95, MRR: 0.8}).Check(reps); err != nil {
		t.Errorf("at the bars: %v", err)
	}
	if err := (Bars{}).Check(reps); err != nil {
		t.Errorf("no bars: %v", err)
	}
	err := (Bars{MRR: 0.85}).Check(reps)
	if err == nil || !strings.Contains(err.Error(), "below the bar on b.jsonl") {
		t.Errorf("MRR under the bar on the second site: %v", err)
	}
}
