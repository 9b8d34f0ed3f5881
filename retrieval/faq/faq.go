// Package faq answers well-known questions first: it matches a visitor's question against a list of frequently
// asked questions (an operator's file, and the FAQ markup ingest found on the site's pages) and says how sure the
// match is, so that a near-certain match can be answered directly and a weaker one can join the context as
// priority evidence (the FAQ-first pipeline of FAQ-backed RAG assistants).
//
// Matching is lexical and strict by design: a direct answer skips the model, so a question that differs from an
// FAQ's in a word that carries meaning ("spring" for "fall", "graduate" for "undergraduate") must not match.
// The score is a weighted Dice coefficient of the two questions' index terms (stemmed, stopwords dropped), each
// term weighted by its rarity among the FAQ's questions, so the words that tell questions apart weigh most. Each
// entry is read in its own language (its Lang, else the one its text is written in): the visitor's question is
// analysed as that language analyses text (its Snowball stems and stopwords, CJK bigrams), so "Wo sind die
// Bibliotheken?" meets "Wo ist die Bibliothek?". A question's word that an English FAQ's question writes as a
// WordNet synonym (in one of the word's most frequent senses) counts for most of a match, so that a close
// paraphrase ("when do fall classes start") is still answered.
//
// A Matcher is safe for concurrent use.
package faq

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/ragproxy/ragproxy/retrieval/wordnet"
	"github.com/ragproxy/ragproxy/textnorm"
)

// Default thresholds of a match's score. DefaultDirectThreshold answers directly: it sits above the near misses of
// the labelled example set (`ragproxy eval --faq ... --faq-questions ...` calibrates it for a site's own set), so
// only a rephrasing of an FAQ's own words reaches it. DefaultEvidenceThreshold adds the entry to the context as
// priority evidence, where the model judges it.
const (
	DefaultDirectThreshold   = 0.90
	DefaultEvidenceThreshold = 0.60
)

// Entry is one frequently asked question with its answer.
type Entry struct {
	Question string `json:"question" yaml:"question"`
	Answer   string `json:"answer" yaml:"answer"`
	// URL is the page the answer comes from, linked as the answer's source.
	URL string `json:"url" yaml:"url"`
	// Title names the URL's page in the source link; default the question.
	Title string `json:"title,omitempty" yaml:"title,omitempty"`
	// Alternatives are other phrasings of Question, matched like it.
	Alternatives []string `json:"alternatives,omitempty" yaml:"alternatives,omitempty"`
	// Source says where the entry comes from: "operator" for the operator's file, else the page markup kind.
	Source string `json:"source,omitempty" yaml:"source,omitempty"`
	// Lang is the language the entry is written in, a BCP 47 tag ("de", "pt-BR"); empty: the language its
	// question and answer are surely written in, else English (WithLanguage gives a site's language instead).
	Lang string `json:"lang,omitempty" yaml:"lang,omitempty"`
}

// Load reads an operator's FAQ file: JSON Lines (one entry per line, .jsonl), a JSON array (.json) or YAML (a
// list of entries, .yaml or .yml). Every entry needs a question, an answer and an absolute http(s) URL; the
// first that lacks one fails the load with its position.
func Load(path string) ([]Entry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load faq: %w", err)
	}
	var entries []Entry
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml":
		if err := yaml.Unmarshal(b, &entries); err != nil {
			return nil, fmt.Errorf("load faq %s: %w", path, err)
		}
	case ".json":
		if err := json.Unmarshal(b, &entries); err != nil {
			return nil, fmt.Errorf("load faq %s: %w", path, err)
		}
	default:
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for line := 1; sc.Scan(); line++ {
			text := bytes.TrimSpace(sc.Bytes())
			if len(text) == 0 || text[0] == '#' {
				continue
			}
			var e Entry
			if err := json.Unmarshal(text, &e); err != nil {
				return nil, fmt.Errorf("load faq %s: line %d: %w", path, line, err)
			}
			entries = append(entries, e)
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("load faq %s: %w", path, err)
		}
	}
	for i := range entries {
		e := &entries[i]
		if e.Source == "" {
			e.Source = "operator"
		}
		if err := e.validate(); err != nil {
			return nil, fmt.Errorf("load faq %s: entry %d: %w", path, i+1, err)
		}
	}
	return entries, nil
}

func (e *Entry) validate() error {
	switch {
	case strings.TrimSpace(e.Question) == "":
		return errors.New("no question")
	case strings.TrimSpace(e.Answer) == "":
		return fmt.Errorf("question %q has no answer", e.Question)
	case !strings.HasPrefix(e.URL, "https://") && !strings.HasPrefix(e.URL, "http://"):
		return fmt.Errorf("question %q: url %q is not an absolute http(s) URL", e.Question, e.URL)
	case e.Lang != "" && textnorm.Base(e.Lang) == "":
		return fmt.Errorf("question %q: lang %q is not a language tag (such as \"de\" or \"pt-BR\")", e.Question, e.Lang)
	}
	return nil
}

// Match is the best FAQ entry for a question.
type Match struct {
	Entry *Entry
	// Phrasing is the entry's question or alternative that matched.
	Phrasing string
	// Score is the weighted Dice coefficient of the question's and the phrasing's terms, synonyms counting
	// synonymShare of a match, from 0 to 1.
	Score float64
}

// Matcher finds the FAQ entry a question asks.
type Matcher struct {
	entries   []Entry
	phrasings []phrasing
	// langs are the analyses the entries are read in, nil for English; a phrasing names its by index.
	langs []*textnorm.Language
	// vocabulary holds the terms of the entries' questions, which compounds are split against.
	vocabulary map[string]bool
	idf        map[string]float64
	// unseen is the weight of a term no FAQ question has: the rarest weight.
	unseen float64
}

// phrasing is one question or alternative of an entry, as terms of its entry's language (Matcher.langs).
type phrasing struct {
	entry int
	lang  int
	text  string
	terms map[string]bool
}

// NewMatcher indexes entries. Entries without a question or an answer are skipped; when two entries ask the same
// question (the same terms), the first is kept, so an operator's entry listed first wins over the site's markup.
func NewMatcher(entries []Entry) *Matcher {
	m := &Matcher{idf: map[string]float64{}, vocabulary: map[string]bool{}}
	type asked struct {
		entry Entry
		lang  *textnorm.Language
	}
	var all []asked
	for _, e := range entries {
		if strings.TrimSpace(e.Question) == "" || strings.TrimSpace(e.Answer) == "" {
			continue
		}
		l := entryLanguage(&e)
		all = append(all, asked{e, l})
		// The terms of the questions, which a compound is split against (German "Vorlesungsbeginn" where another
		// entry writes "Vorlesungen" and "beginnen").
		for _, q := range append([]string{e.Question}, e.Alternatives...) {
			for t := range termSet(q, l, nil) {
				m.vocabulary[t] = true
			}
		}
	}
	seen := map[string]bool{}
	for _, a := range all {
		id := len(m.entries)
		added := false
		li := slices.Index(m.langs, a.lang)
		if li < 0 {
			li = len(m.langs)
			m.langs = append(m.langs, a.lang)
		}
		for _, q := range append([]string{a.entry.Question}, a.entry.Alternatives...) {
			terms := termSet(q, a.lang, m.known)
			key := tag(a.lang) + ":" + setKey(terms)
			if len(terms) == 0 || seen[key] {
				continue
			}
			seen[key] = true
			m.phrasings = append(m.phrasings, phrasing{entry: id, lang: li, text: q, terms: terms})
			added = true
		}
		if added {
			m.entries = append(m.entries, a.entry)
		}
	}
	df := map[string]int{}
	for _, p := range m.phrasings {
		for t := range p.terms {
			df[t]++
		}
	}
	n := float64(len(m.phrasings))
	for t, d := range df {
		m.idf[t] = math.Log(1 + n/float64(d))
	}
	m.unseen = math.Log(1 + n)
	return m
}

// Len is the number of entries indexed.
func (m *Matcher) Len() int { return len(m.entries) }

// Entries are the entries indexed, in order.
func (m *Matcher) Entries() []Entry { return m.entries }

// Match returns the entry whose phrasing scores best against question, read in each entry's language; ok is
// false when no phrasing shares a term with it.
func (m *Matcher) Match(question string) (Match, bool) {
	// The question's terms and their weight in each language of the entries.
	asked := make([]map[string]bool, len(m.langs))
	weights := make([]float64, len(m.langs))
	for i, l := range m.langs {
		asked[i] = termSet(question, l, m.known)
		for t := range asked[i] {
			weights[i] += m.weight(t)
		}
	}
	var syn map[string][]string // the question's synonyms, looked up once an English phrasing shares a term
	var best Match
	for _, p := range m.phrasings {
		q, qw := asked[p.lang], weights[p.lang]
		if len(q) == 0 {
			continue
		}
		shared, pw := 0.0, 0.0
		for t := range p.terms {
			w := m.weight(t)
			pw += w
			if q[t] {
				shared += w
			}
		}
		if shared == 0 {
			continue
		}
		if m.langs[p.lang] == nil { // WordNet is English
			if syn == nil {
				syn = synonyms(question, q)
			}
			shared += m.bridged(q, syn, p.terms)
		}
		if s := 2 * shared / (qw + pw); s > best.Score {
			best = Match{Entry: &m.entries[p.entry], Phrasing: p.text, Score: s}
		}
	}
	return best, best.Entry != nil
}

// synonymShare is what a question term counts for when the phrasing has a synonym of it instead ("start" for
// "begin", "name" for "called"): most of a match, less than the word itself.
const synonymShare = 0.8

// synonymRank is the last WordNet sense rank (0 for a word's most frequent sense) whose synonyms bridge a
// question's word to an FAQ's: rarer senses ("fall" as a synonym of "drop") would match what the question does
// not mean.
const synonymRank = 1

// bridged is the weight the question's terms missing from a phrasing add through synonyms the phrasing has
// instead, each phrasing term bridged at most once.
func (m *Matcher) bridged(q map[string]bool, syn map[string][]string, terms map[string]bool) float64 {
	var used map[string]bool
	add := 0.0
	for t, alts := range syn {
		if terms[t] {
			continue
		}
		for _, a := range alts {
			if terms[a] && !q[a] && !used[a] {
				if used == nil {
					used = map[string]bool{}
				}
				used[a] = true
				add += synonymShare * min(m.weight(t), m.weight(a))
				break
			}
		}
	}
	return add
}

// synonyms maps each term of the question (terms, as termSet made them) to the terms of its words' WordNet
// synonyms in their most frequent senses (see synonymRank).
func synonyms(question string, terms map[string]bool) map[string][]string {
	db := wordnet.Load()
	out := map[string][]string{}
	textnorm.AppendWords(nil, question, func(w []byte) bool {
		word := string(w)
		if questionWords[word] || textnorm.IsStopword(word) {
			return true
		}
		t := textnorm.Stem(word)
		if !terms[t] || out[t] != nil {
			return true
		}
		alts := []string{}
		for _, s := range db.Senses(word) {
			if s.Rank > synonymRank {
				continue
			}
			for _, sw := range s.Words {
				if strings.Contains(sw, " ") || textnorm.IsStopword(sw) {
					continue
				}
				if a := textnorm.Stem(sw); a != t && !slices.Contains(alts, a) {
					alts = append(alts, a)
				}
			}
		}
		out[t] = alts
		return true
	})
	return out
}

func (m *Matcher) weight(t string) float64 {
	if w, ok := m.idf[t]; ok {
		return w
	}
	return m.unseen
}

// termSet is the set of a question's index terms in language l (nil: English; see textnorm.Terms and
// textnorm.Language.WordTerms), with the question words kept that change what is asked of the same subject
// ("when" and "where", "how much" and "how many", a negation), and a compound that known does not hold as its
// parts when it holds them all (compoundParts).
func termSet(s string, l *textnorm.Language, known func(term string) bool) map[string]bool {
	out := map[string]bool{}
	if l != nil {
		keep := questionWordsIn[l.Tag()]
		s = l.Normalize(s)
		textnorm.Words(s, func(w string) bool {
			if keep[w] {
				out[w] = true
				return true
			}
			if parts := compoundParts(w, l, known); parts != nil {
				for _, t := range parts {
					out[t] = true
				}
				return true
			}
			l.WordTerms(w, textnorm.Options{}, func(t string) { out[t] = true })
			return true
		})
		for w := range kanaQuestionWords[l.Tag()] { // bigrams of two hiragana are not terms
			if strings.Contains(s, w) {
				out[w] = true
			}
		}
		return out
	}
	textnorm.AppendWords(nil, s, func(w []byte) bool {
		word := string(w)
		switch {
		case questionWords[word]:
			out[word] = true
		case !textnorm.IsStopword(word):
			out[textnorm.Stem(word)] = true
		}
		return true
	})
	return out
}

func setKey(terms map[string]bool) string {
	keys := make([]string, 0, len(terms))
	for t := range terms {
		keys = append(keys, t)
	}
	slices.Sort(keys)
	return strings.Join(keys, " ")
}
