// Package eval measures retrieval and answer quality on question sets: page Hit@k and MRR against the pages that
// answer each question, whether the question's fact reaches the context, ablations of the retrieval pipeline
// (the FHNW prototype's table), and, with a model, answer correctness judged by the FHNW prototype's rule.
// Functions are safe for concurrent use; a Retriever is shared read-only.
package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ragproxy/ragproxy/grounding"
	"github.com/ragproxy/ragproxy/markdown"
	"github.com/ragproxy/ragproxy/retrieval"
)

// Question is one line of a question set (the format of shared/eval/berkeley-dev.jsonl).
type Question struct {
	ID           string   `json:"id"`
	Question     string   `json:"question"`
	ExpectedURLs []string `json:"expected_urls"`
	Fact         string   `json:"fact"`
	Note         string   `json:"note,omitempty"`
	// Before are the user's earlier messages of a conversation, oldest first, which Question follows up ("how
	// much is in-state tuition?" before "and for international students?"); none for a question on its own.
	Before []string `json:"before,omitempty"`
}

// Messages are the conversation q asks: its earlier messages, then its question.
func (q Question) Messages() []retrieval.Message {
	msgs := make([]retrieval.Message, 0, len(q.Before)+1)
	for _, b := range q.Before {
		msgs = append(msgs, retrieval.Message{Role: "user", Content: b})
	}
	return append(msgs, retrieval.Message{Role: "user", Content: q.Question})
}

// LoadQuestions reads a JSONL question set.
func LoadQuestions(path string) ([]Question, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load questions: %w", err)
	}
	defer f.Close()
	var qs []Question
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var q Question
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			return nil, fmt.Errorf("load questions: %s line %d: %w", path, n, err)
		}
		if q.Question == "" || len(q.ExpectedURLs) == 0 {
			return nil, fmt.Errorf("load questions: %s line %d: question and expected_urls are required", path, n)
		}
		qs = append(qs, q)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("load questions: %w", err)
	}
	return qs, nil
}

// Ks are the cut-offs Hit@k is reported at.
var Ks = []int{1, 3, 5, 8}

// UnitKs are the numbers of best evidence units Metrics.FactInUnits is reported for.
var UnitKs = []int{1, 3, 6, 12}

// BestPassages is how many of the best passages Metrics.FactInBestPassages reads.
const BestPassages = 3

// Metrics are retrieval quality figures over a question set.
type Metrics struct {
	Questions int             `json:"questions"`
	Hit       map[int]float64 `json:"hit"`
	MRR       float64         `json:"mrr"`
	// FactInContext is the share of questions whose fact occurs in the context.
	FactInContext float64 `json:"fact_in_context"`
	// LatencyP50 and LatencyP99 are retrieval times per question (analysis excluded).
	// FactInAnswer and FactInLead are the shares of questions whose fact occurs in the answer written without a
	// model (grounding.OfflineAnswer), anywhere and within its first LeadChars characters; AnswerChars is that
	// answer's median length in characters.
	FactInAnswer float64 `json:"fact_in_answer"`
	FactInLead   float64 `json:"fact_in_lead"`
	AnswerChars  int     `json:"answer_chars_p50"`
	// FactInBestPassage and FactInBestPassages are the shares of questions whose fact occurs in the passage
	// retrieval scored highest, and in one of the BestPassages it scored highest; FactInUnits[k], for k in
	// UnitKs, the share whose fact occurs in one of the k units that evidence selection scored highest
	// (retrieval.Retriever.Evidence; a unit as an answer quotes it, with the sentence before it and those after).
	// They say where an offline answer's misses are: a fact that no unit among the best holds cannot lead it.
	FactInBestPassage  float64         `json:"fact_in_best_passage"`
	FactInBestPassages float64         `json:"fact_in_best_passages"`
	FactInUnits        map[int]float64 `json:"fact_in_best_units"`
	LatencyP50         time.Duration   `json:"latency_p50_ns"`
	LatencyP99         time.Duration   `json:"latency_p99_ns"`
	Misses             []Miss          `json:"misses,omitempty"`
}

// Miss is a question whose expected page was not ranked first or whose fact missed the context.
type Miss struct {
	ID        string   `json:"id"`
	Question  string   `json:"question"`
	Rank      int      `json:"rank"` // 1-based rank of the first expected page; 0 when absent
	FactFound bool     `json:"fact_found"`
	Got       []string `json:"got"` // the top pages returned
}

// Retrieve evaluates retrieval with analyzer an over qs.
func Retrieve(ctx context.Context, r *retrieval.Retriever, an retrieval.Analyzer, qs []Question) (Metrics, error) {
	m := Metrics{Questions: len(qs), Hit: map[int]float64{}, FactInUnits: map[int]float64{}}
	if len(qs) == 0 {
		return m, nil
	}
	var (
		lat     []time.Duration
		lengths []int
	)
	facts, inAnswer, inLead := 0, 0, 0
	for _, q := range qs {
		a, err := an.Analyze(ctx, q.Messages())
		if err != nil {
			return m, fmt.Errorf("eval %s: %w", q.ID, err)
		}
		start := time.Now()
		res, err := r.RetrieveFor(ctx, a)
		if err != nil {
			return m, fmt.Errorf("eval %s: %w", q.ID, err)
		}
		lat = append(lat, time.Since(start))
		rank := 0
		var got []string
		for i, p := range res.Pages {
			got = append(got, pathOf(p.URL))
			if rank == 0 && matches(p.URL, q.ExpectedURLs) {
				rank = i + 1
			}
		}
		for _, k := range Ks {
			if rank > 0 && rank <= k {
				m.Hit[k]++
			}
		}
		if rank > 0 {
			m.MRR += 1 / float64(rank)
		}
		found := q.Fact == "" || ContainsFact(res.Context, q.Fact)
		if found {
			facts++
		}
		answer := offlineAnswer(r, res)
		lengths = append(lengths, utf8.RuneCountInString(answer))
		if q.Fact == "" || ContainsFact(shown(answer), q.Fact) {
			inAnswer++
		}
		if q.Fact == "" || ContainsFact(lead(answer), q.Fact) {
			inLead++
		}
		if found {
			best, inBest := factInBestPassages(res, q.Fact)
			m.FactInBestPassage += best
			m.FactInBestPassages += inBest
			unit := factUnit(r, res, q.Fact)
			for _, k := range UnitKs {
				if unit >= 0 && unit < k {
					m.FactInUnits[k]++
				}
			}
		}
		if rank != 1 || !found {
			m.Misses = append(m.Misses, Miss{ID: q.ID, Question: q.Question, Rank: rank, FactFound: found, Got: got})
		}
	}
	n := float64(len(qs))
	for _, k := range Ks {
		m.Hit[k] /= n
	}
	m.MRR /= n
	m.FactInContext = float64(facts) / n
	m.FactInAnswer, m.FactInLead = float64(inAnswer)/n, float64(inLead)/n
	m.FactInBestPassage /= n
	m.FactInBestPassages /= n
	for _, k := range UnitKs {
		m.FactInUnits[k] /= n
	}
	sort.Ints(lengths)
	m.AnswerChars = lengths[(len(lengths)-1)/2]
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	m.LatencyP50 = lat[(len(lat)-1)*50/100]
	m.LatencyP99 = lat[(len(lat)-1)*99/100]
	return m, nil
}

// factInBestPassages reports, as 1 or 0, whether fact occurs in the passage of res scored highest, and in one
// of the BestPassages scored highest. A question without a fact holds it everywhere.
func factInBestPassages(res *retrieval.Result, fact string) (best, inBest float64) {
	order := make([]int, len(res.Chunks))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return res.Chunks[order[a]].Score > res.Chunks[order[b]].Score })
	for rank, i := range order[:min(BestPassages, len(order))] {
		if fact == "" || ContainsFact(res.Chunks[i].Text, fact) {
			if rank == 0 {
				best = 1
			}
			return best, 1
		}
	}
	return 0, 0
}

// factUnit is the rank, from 0, of the first of res's best evidence units that holds fact (with the sentence
// quoted before it and those after), among the last of UnitKs; -1 when none does.
func factUnit(r *retrieval.Retriever, res *retrieval.Result, fact string) int {
	for i, e := range r.Evidence(res, UnitKs[len(UnitKs)-1]) {
		if fact == "" || ContainsFact(e.Before+" "+e.Text+" "+strings.Join(e.Next, " "), fact) {
			return i
		}
	}
	return -1
}

// LeadChars is how much of an answer a reader takes in at a glance, in characters: the part FactInLead reads.
const LeadChars = 300

// offlineAnswer is the answer the server writes without a model for res.
func offlineAnswer(r *retrieval.Retriever, res *retrieval.Result) string {
	if res.Empty {
		return grounding.DontKnow(res, grounding.DefaultMaxSources)
	}
	return grounding.OfflineAnswer(r, res, grounding.DefaultMaxSources)
}

// shown is an answer as a reader sees it: its quote markers ("> ") and link targets left out (a link shows its
// text), so that a fact quoted across a line break (a sentence, then the command it leads into) reads whole.
func shown(answer string) string {
	var b strings.Builder
	for line := range strings.Lines(markdown.StripLinks(answer)) {
		b.WriteString(strings.TrimPrefix(line, "> "))
	}
	return b.String()
}

// lead is the first LeadChars characters of an answer as a reader sees it (see shown).
func lead(answer string) string {
	s, n := shown(answer), 0
	for i := range s {
		if n == LeadChars {
			return s[:i]
		}
		n++
	}
	return s
}

// matches reports whether a page URL is one of the expected URLs, which may be absolute or site paths.
func matches(pageURL string, expected []string) bool {
	p := strings.TrimSuffix(pathOf(pageURL), "/")
	for _, e := range expected {
		if strings.TrimSuffix(pathOf(e), "/") == p {
			return true
		}
	}
	return false
}

func pathOf(u string) string {
	if pu, err := url.Parse(u); err == nil && pu.Path != "" {
		return pu.Path
	}
	return u
}

// ContainsFact reports whether fact occurs in text, ignoring case, whitespace, markdown emphasis, link targets and
// table cell borders: a fact whose words are partly a link's text ("No [`KEYS`](https://...) file was found") or
// lie in neighbouring cells of a table row ("| `ERROR` | 40 |" for "ERROR 40") is in the text as a reader (and
// the model) reads it.
func ContainsFact(text, fact string) bool {
	return strings.Contains(normalizeFact(text), normalizeFact(fact))
}

// normalizeFact is s as a fact is looked for in it: lower case, without links' targets, markup and the zero-width
// spaces that Khmer and Thai pages put between words (the cleaned text has none; a fact copied from a page may).
func normalizeFact(s string) string {
	s = strings.NewReplacer("*", "", "_", "", "`", "", "|", " ", "\u200b", "").Replace(strings.ToLower(markdown.StripLinks(s)))
	return strings.Join(strings.Fields(s), " ")
}
