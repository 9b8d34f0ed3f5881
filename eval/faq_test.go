package eval

import (
	"slices"
	"testing"

	"github.com/ragproxy/ragproxy/retrieval/faq"
)

// TestCalibrateFAQExample calibrates direct answers on the example site's FAQ and its labelled questions (near
// misses included): the serving default must keep precision at or above 0.98 there, and answer some directly.
func TestCalibrateFAQExample(t *testing.T) {
	_, _, rep := calibrate(t, "../examples/faq.yaml", "../examples/faq-questions.jsonl")
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

// TestCalibrateFAQGerman calibrates direct answers on a German translation of the example FAQ with 50 labelled
// German questions (24 near misses or unrelated), whose entries are read as German (their language is detected):
// at the calibrated threshold precision holds at 0.98 or more with half the answerable questions answered
// directly, and more of them than when the same entries are read as English, as they were before entries had
// languages.
func TestCalibrateFAQGerman(t *testing.T) {
	entries, qs, rep := calibrate(t, "testdata/faq/faq-de.yaml", "testdata/faq/faq-de-questions.jsonl")
	if rep.AtChosen.Precision < 0.98 || rep.AtChosen.Recall < 0.5 {
		t.Errorf("at the calibrated threshold %.2f: precision %.3f, recall %.3f; want >= 0.98 and >= 0.5", rep.Chosen,
			rep.AtChosen.Precision, rep.AtChosen.Recall)
	}
	english := slices.Clone(entries)
	for i := range english {
		english[i].Lang = "en"
	}
	asEnglish := CalibrateFAQ(faq.NewMatcher(english), qs, 0.98, faq.DefaultDirectThreshold)
	t.Logf("read as English: threshold %.2f, precision %.3f, recall %.3f", asEnglish.Chosen, asEnglish.AtChosen.Precision,
		asEnglish.AtChosen.Recall)
	if asEnglish.AtChosen.Recall >= rep.AtChosen.Recall {
		t.Errorf("read as German, recall %.3f at precision %.3f; as English %.3f at %.3f: the German analysis should answer more",
			rep.AtChosen.Recall, rep.AtChosen.Precision, asEnglish.AtChosen.Recall, asEnglish.AtChosen.Precision)
	}
}

// calibrate loads an FAQ file and its labelled questions and calibrates direct answers on them at a target
// precision of 0.98, logging the report.
func calibrate(t *testing.T, faqFile, questions string) ([]faq.Entry, []FAQQuestion, FAQReport) {
	t.Helper()
	entries, err := faq.Load(faqFile)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := LoadFAQQuestions(questions)
	if err != nil {
		t.Fatal(err)
	}
	rep := CalibrateFAQ(faq.NewMatcher(entries), qs, 0.98, faq.DefaultDirectThreshold)
	for _, l := range rep.Lines() {
		t.Log(l)
	}
	return entries, qs, rep
}
