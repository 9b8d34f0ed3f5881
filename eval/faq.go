package eval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/ragproxy/ragproxy/retrieval/faq"
)

// FAQQuestion is one line of a labelled FAQ set: a question and the FAQ question it asks, or "" for a question
// that no FAQ entry answers (near misses: the same subject, another thing asked).
type FAQQuestion struct {
	Question string `json:"question"`
	FAQ      string `json:"faq"`
}

// LoadFAQQuestions reads a JSONL labelled FAQ set.
func LoadFAQQuestions(path string) ([]FAQQuestion, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load faq questions: %w", err)
	}
	defer f.Close()
	var qs []FAQQuestion
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var q FAQQuestion
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			return nil, fmt.Errorf("load faq questions: %s line %d: %w", path, n, err)
		}
		if q.Question == "" {
			return nil, fmt.Errorf("load faq questions: %s line %d: question is required", path, n)
		}
		qs = append(qs, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("load faq questions: %w", err)
	}
	return qs, nil
}

// FAQPoint is how direct answers fare at one threshold.
type FAQPoint struct {
	Threshold float64 `json:"threshold"`
	// Direct is the number of questions whose best match reaches the threshold; Correct those whose match is
	// the labelled entry.
	Direct  int `json:"direct"`
	Correct int `json:"correct"`
	// Precision is Correct / Direct (1 when Direct is 0); Recall is Correct over the questions that have an
	// entry.
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
}

// FAQReport is the calibration of the direct-answer threshold on a labelled set.
type FAQReport struct {
	Questions, Answerable int
	Points                []FAQPoint
	// Chosen is the lowest threshold at which precision, and precision at every higher threshold, reaches the
	// target; 1 when none does below it.
	Chosen    float64
	AtChosen  FAQPoint
	Target    float64
	Wrong     []FAQMiss // direct answers at Chosen that were wrong
	NearMiss  []FAQMiss // questions with no entry, closest first
	Threshold float64   // the threshold evaluated as the serving default
	AtDefault FAQPoint
}

// FAQMiss is a question with its best match.
type FAQMiss struct {
	Question, Want, Got string
	Score               float64
}

// CalibrateFAQ scores every labelled question against m and reports direct-answer precision and recall at
// thresholds from 0.50 to 1.00, choosing the lowest that keeps precision at or above target from there up. def
// is the serving default, reported as well.
func CalibrateFAQ(m *faq.Matcher, qs []FAQQuestion, target, def float64) FAQReport {
	type scored struct {
		q     FAQQuestion
		match faq.Match
	}
	var all []scored
	rep := FAQReport{Questions: len(qs), Target: target, Threshold: def}
	for _, q := range qs {
		mt, _ := m.Match(q.Question)
		all = append(all, scored{q, mt})
		if q.FAQ != "" {
			rep.Answerable++
		}
	}
	at := func(t float64) FAQPoint {
		p := FAQPoint{Threshold: t, Precision: 1}
		for _, s := range all {
			if s.match.Entry == nil || s.match.Score < t-1e-9 {
				continue
			}
			p.Direct++
			if s.match.Entry.Question == s.q.FAQ {
				p.Correct++
			}
		}
		if p.Direct > 0 {
			p.Precision = float64(p.Correct) / float64(p.Direct)
		}
		if rep.Answerable > 0 {
			p.Recall = float64(p.Correct) / float64(rep.Answerable)
		}
		return p
	}
	for i := 50; i <= 100; i++ {
		rep.Points = append(rep.Points, at(float64(i)/100))
	}
	rep.Chosen = 1
	for i := len(rep.Points) - 1; i >= 0 && rep.Points[i].Precision >= target; i-- {
		rep.Chosen = rep.Points[i].Threshold
	}
	rep.AtChosen, rep.AtDefault = at(rep.Chosen), at(def)
	for _, s := range all {
		got := ""
		if s.match.Entry != nil {
			got = s.match.Entry.Question
		}
		switch {
		case s.match.Entry != nil && s.match.Score >= rep.Chosen-1e-9 && got != s.q.FAQ:
			rep.Wrong = append(rep.Wrong, FAQMiss{s.q.Question, s.q.FAQ, got, s.match.Score})
		case s.q.FAQ == "" && s.match.Entry != nil:
			rep.NearMiss = append(rep.NearMiss, FAQMiss{s.q.Question, "", got, s.match.Score})
		}
	}
	sort.SliceStable(rep.NearMiss, func(i, j int) bool { return rep.NearMiss[i].Score > rep.NearMiss[j].Score })
	return rep
}

// Lines renders the report for the terminal.
func (r FAQReport) Lines() []string {
	pct := func(x float64) string { return fmt.Sprintf("%.3f", x) }
	out := []string{fmt.Sprintf("faq: %d questions, %d with an entry, target precision %s", r.Questions, r.Answerable, pct(r.Target)),
		"threshold  direct  correct  precision  recall"}
	for _, p := range r.Points {
		if math.Mod(math.Round(p.Threshold*100), 5) != 0 && p.Threshold != r.Chosen {
			continue
		}
		out = append(out, fmt.Sprintf("%9.2f  %6d  %7d  %9s  %6s", p.Threshold, p.Direct, p.Correct, pct(p.Precision), pct(p.Recall)))
	}
	out = append(out, fmt.Sprintf("chosen threshold %.2f: precision %s, recall %s; serving default %.2f: precision %s, recall %s",
		r.Chosen, pct(r.AtChosen.Precision), pct(r.AtChosen.Recall), r.Threshold, pct(r.AtDefault.Precision), pct(r.AtDefault.Recall)))
	for i, m := range r.NearMiss {
		if i == 5 {
			break
		}
		out = append(out, fmt.Sprintf("near miss %.3f: %q -> %q", m.Score, m.Question, m.Got))
	}
	for _, m := range r.Wrong {
		out = append(out, fmt.Sprintf("wrong direct answer %.3f: %q -> %q (want %q)", m.Score, m.Question, m.Got, m.Want))
	}
	return out
}
