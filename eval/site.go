package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/faq"
)

// Site is one index and its question set, evaluated by Run as `ragproxy eval` does.
type Site struct {
	// Index and Questions are the index directory and the question file, named in the report. Required.
	Index, Questions string
	// Set is the questions (LoadQuestions(Questions)). Required.
	Set []Question
	// Retriever searches the index (scoped to Assistant's pages when there is one). Required.
	Retriever *retrieval.Retriever
	// Analyzer analyses the questions; nil: the heuristic analysis.
	Analyzer retrieval.Analyzer
	// AnalyzerName names Analyzer in the report; default "heuristic".
	AnalyzerName string
	// Assistant names the section assistant Retriever is scoped to, in the report; default "": the whole site.
	Assistant string
	// Ablations, when not nil, is the configuration whose ablation table is run; nil: none.
	Ablations *retrieval.Config
	// Judge, when not nil, has the model answer every question Repeats times and judges the answers; nil: none.
	Judge *Judge
	// Repeats is how many answers Judge asks per question (Judge.Answers).
	Repeats int
}

// Run evaluates retrieval (and, with a Judge, answers) on the site.
func (s Site) Run(ctx context.Context) (Report, error) {
	rep := Report{Index: s.Index, Questions: s.Questions, Analyzer: s.AnalyzerName, Assistant: s.Assistant}
	if rep.Analyzer == "" {
		rep.Analyzer = "heuristic"
	}
	qs := s.Set
	an := s.Analyzer
	if an == nil {
		an = retrieval.Heuristic{}
	}
	var err error
	if rep.Retrieval, err = Retrieve(ctx, s.Retriever, an, qs); err != nil {
		return rep, err
	}
	if s.Ablations != nil {
		if rep.Ablations, err = RunAblations(ctx, s.Retriever, an, qs, Ablations(*s.Ablations)); err != nil {
			return rep, err
		}
	}
	if s.Judge != nil {
		if rep.Answers, err = s.Judge.Answers(ctx, s.Retriever, an, qs, s.Repeats); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// Bars are the floors of a site's retrieval metrics; the zero value holds nothing back.
type Bars struct {
	// FactInContext, Hit8 and MRR are the least fact-in-context, page Hit@8 and page MRR; default 0.
	FactInContext, Hit8, MRR float64
}

// Check fails on the first report whose retrieval is below the bars.
func (b Bars) Check(reps []Report) error {
	for _, rep := range reps {
		m := rep.Retrieval
		if m.FactInContext < b.FactInContext || m.Hit[8] < b.Hit8 || m.MRR < b.MRR {
			return fmt.Errorf("eval: below the bar on %s: fact-in-context %.3f (min %.2f), Hit@8 %.3f (min %.2f), MRR %.3f (min %.2f)",
				rep.Questions, m.FactInContext, b.FactInContext, m.Hit[8], b.Hit8, m.MRR, b.MRR)
		}
	}
	return nil
}

// WriteJSON writes the reports as indented JSON: one site's report alone, several as an array.
func WriteJSON(w io.Writer, reps []Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	var v any = reps
	if len(reps) == 1 {
		v = reps[0]
	}
	return enc.Encode(v)
}

// CheckFAQ calibrates the direct answers of the FAQ file on the labelled FAQ questions, and fails when they are
// less precise than min at threshold. The report's lines come back also when it fails.
func CheckFAQ(file, questions string, threshold, min float64) ([]string, error) {
	entries, err := faq.Load(file)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	qs, err := LoadFAQQuestions(questions)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	rep := CalibrateFAQ(faq.NewMatcher(entries), qs, min, threshold)
	if rep.AtDefault.Precision < min {
		return rep.Lines(), fmt.Errorf("eval: below the bar: FAQ direct answers at threshold %.2f have precision %.3f (min %.2f); use --faq-threshold %.2f or add alternatives",
			threshold, rep.AtDefault.Precision, min, rep.Chosen)
	}
	return rep.Lines(), nil
}
