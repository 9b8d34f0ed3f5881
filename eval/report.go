package eval

import (
	"fmt"
	"strings"
)

// Report is the output of `ragproxy eval`.
type Report struct {
	Index     string `json:"index"`
	Questions string `json:"questions"`
	Analyzer  string `json:"analyzer"`
	// Assistant is the section assistant whose pages alone were searched, with its URL prefixes; "" for the
	// whole site.
	Assistant string   `json:"assistant,omitempty"`
	Retrieval Metrics  `json:"retrieval"`
	Ablations []Row    `json:"ablations,omitempty"`
	Answers   *Answers `json:"answers,omitempty"`
}

// Markdown renders the report for people.
func (r Report) Markdown() string {
	var b strings.Builder
	m := r.Retrieval
	fmt.Fprintf(&b, "# Retrieval on %s (%d questions, %s analysis)\n\n", r.Questions, m.Questions, r.Analyzer)
	if r.Assistant != "" {
		fmt.Fprintf(&b, "Section assistant %s: only its pages are searched.\n\n", r.Assistant)
	}
	b.WriteString(Markdown([]Row{{Variant: "configured", Metrics: m}}))
	fmt.Fprintf(&b, "\nOffline answers (no model): fact in the answer %.3f, in its first %d characters %.3f, median length %d characters.\n",
		m.FactInAnswer, LeadChars, m.FactInLead, m.AnswerChars)
	if len(m.FactInUnits) > 0 {
		fmt.Fprintf(&b, "Where the fact is: in the best passage %.3f, in the best %d %.3f; in the evidence unit scored best %.3f",
			m.FactInBestPassage, BestPassages, m.FactInBestPassages, m.FactInUnits[UnitKs[0]])
		for _, k := range UnitKs[1:] {
			fmt.Fprintf(&b, ", in the best %d %.3f", k, m.FactInUnits[k])
		}
		b.WriteString(".\n")
	}
	if len(m.Misses) > 0 {
		b.WriteString("\n## Misses\n\n| id | question | rank | fact in context | top pages |\n| --- | --- | --- | --- | --- |\n")
		for _, x := range m.Misses {
			got := x.Got
			if len(got) > 3 {
				got = got[:3]
			}
			fmt.Fprintf(&b, "| %s | %s | %d | %v | %s |\n", x.ID, strings.ReplaceAll(x.Question, "|", "/"), x.Rank,
				x.FactFound, strings.Join(got, " "))
		}
	}
	if len(r.Ablations) > 0 {
		b.WriteString("\n## Ablations\n\n")
		b.WriteString(Markdown(r.Ablations))
	}
	if a := r.Answers; a != nil {
		fmt.Fprintf(&b, "\n## Answers (%s, judged by %s, %d runs each)\n\ncorrect: %d/%d (%.1f%%)\n",
			a.Model, a.Model, a.Repeats, a.Correct, a.Total, 100*a.Accuracy)
		for _, w := range a.Wrong {
			fmt.Fprintf(&b, "- %s: %s (%d/%d correct)\n", w.ID, w.Question, w.Correct, a.Repeats)
		}
	}
	return b.String()
}
