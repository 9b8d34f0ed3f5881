package eval

import (
	"testing"

	"github.com/ragproxy/ragproxy/retrieval/faq"
)

// TestCalibrateFAQExample calibrates direct answers on the example site's FAQ and its labelled questions (near
// misses included): the serving default must keep precision at or above 0.98 there, and answer some directly.
func TestCalibrateFAQExample(t *testing.T) {
	entries, err := faq.Load("../examples/faq.yaml")
	if err != nil {
		t.Fatal(err)
	}
	qs, err := LoadFAQQuestions("../examples/faq-questions.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	rep := CalibrateFAQ(faq.NewMatcher(entries), qs, 0.98, faq.DefaultDirectThreshold)
	for _, l := range rep.Lines() {
		t.Log(l)
	}
	if rep.AtDefault.Precision < 0.98 {
		t.Errorf("precision of direct answers at the default threshold %.2f = %.3f, want >= 0.98", rep.Threshold, rep.AtDefault.Precision)
	}
	if rep.AtDefault.Recall < 0.5 {
		t.Errorf("recall of direct answers at the default threshold = %.3f: the threshold answers too few directly", rep.AtDefault.Recall)
	}
	if rep.Chosen > faq.DefaultDirectThreshold {
		t.Errorf("the calibrated threshold %.2f is above the default %.2f", rep.Chosen, faq.DefaultDirectThreshold)
	}
	// Every near miss stays below the default.
	for _, m := range rep.NearMiss {
		if m.Score >= faq.DefaultDirectThreshold {
			t.Errorf("near miss %q gets the direct answer of %q (%.3f)", m.Question, m.Got, m.Score)
		}
	}
}
