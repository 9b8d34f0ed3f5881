// Package wordnet gives query expansion the synonyms and antonyms of WordNet 3.0 (Princeton University; see
// LICENSE-WordNet), and passage selection the words it relates by form and meaning, from a compact file derived from the WordNet database and embedded in the binary, so no
// set-up or download is needed. Each word's senses come in WordNet's order, most frequent first, with their
// counts in WordNet's sense-tagged texts; inflected forms find their base forms by WordNet's own rules
// (morphy(7WN): exception lists, then suffix detachment).
//
// The file is regenerated from the WordNet 3.0 database files with
//
//	apt-get install wordnet-base   # Debian's package: data.*, index.*, *.exc, cntlist.rev in /usr/share/wordnet
//	go generate ./retrieval/wordnet
//
// (go run ./internal/gen -dict DIR reads another copy of the same files); internal/gen's test checks that the
// committed file is what the generator makes.
//
// A DB is immutable once loaded and safe for concurrent use.
package wordnet

//go:generate go run ./internal/gen -dict /usr/share/wordnet -out wordnet.txt.gz

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

//go:embed wordnet.txt.gz
var data []byte

// POS is a WordNet part of speech.
type POS byte

// WordNet's parts of speech, with the letters its files use.
const (
	Noun      POS = 'n'
	Verb      POS = 'v'
	Adjective POS = 'a'
	Adverb    POS = 'r'
)

// Sense is one meaning of a word: a WordNet synset.
type Sense struct {
	// Lemma is the base form the sense belongs to ("begin" for "begins").
	Lemma string
	// POS is the sense's part of speech.
	POS POS
	// Rank is the sense's place among the lemma's senses of that part of speech, 0 for the most frequent.
	Rank int
	// Count is how often the sense was tagged in WordNet's semantically tagged texts (0: never).
	Count int
	// Synset identifies the sense's synset: two words share a meaning when they have senses with the same
	// Synset. It is -1 for a synset of the lemma alone.
	Synset int
	// Words are the synset's words, the lemma's own included; words of a collocation are joined by spaces
	// ("set about"). Proper names are left out.
	Words []string
}

// DB is the loaded WordNet data.
type DB struct {
	synsets    [][]string
	senses     map[string][]entry // lemma -> senses in WordNet order, every part of speech
	antonyms   map[string][]string
	related    map[string][]string
	exceptions map[excKey][]string
}

type entry struct {
	pos    POS
	rank   int
	count  int
	synset int32 // index into synsets, -1 for a synset of the lemma alone
}

type excKey struct {
	pos  POS
	form string
}

// Load returns the embedded WordNet, decoded on the first call (about 0.2 s) and shared afterwards.
var Load = sync.OnceValue(func() *DB {
	db, err := parse(data)
	if err != nil {
		panic("wordnet: embedded data: " + err.Error()) // the file is generated and tested; it cannot be bad
	}
	return db
})

func parse(gz []byte) (*DB, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, err
	}
	db := &DB{senses: map[string][]entry{}, antonyms: map[string][]string{}, related: map[string][]string{},
		exceptions: map[excKey][]string{}}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			return nil, fmt.Errorf("bad line %q", line)
		}
		switch f[0] {
		case "S":
			words := f[1:]
			for i, w := range words {
				words[i] = strings.ReplaceAll(w, "_", " ")
			}
			db.synsets = append(db.synsets, words)
		case "L":
			if len(f) < 4 || len(f[2]) != 1 {
				return nil, fmt.Errorf("bad line %q", line)
			}
			lemma, pos := strings.ReplaceAll(f[1], "_", " "), POS(f[2][0])
			for rank, s := range f[3:] {
				e := entry{pos: pos, rank: rank, synset: -1}
				id, count, hasCount := strings.Cut(s, ":")
				if hasCount {
					if e.count, err = strconv.Atoi(count); err != nil {
						return nil, fmt.Errorf("bad line %q", line)
					}
				}
				if id != "-" {
					n, err := strconv.Atoi(id)
					if err != nil || n < 0 || n >= len(db.synsets) {
						return nil, fmt.Errorf("bad line %q", line)
					}
					e.synset = int32(n)
				}
				db.senses[lemma] = append(db.senses[lemma], e)
			}
		case "A":
			w := strings.ReplaceAll(f[1], "_", " ")
			for _, a := range f[2:] {
				db.antonyms[w] = append(db.antonyms[w], strings.ReplaceAll(a, "_", " "))
			}
		case "R":
			if len(f) < 3 {
				return nil, fmt.Errorf("bad line %q", line)
			}
			db.related[f[1]] = f[2:]
		case "X":
			if len(f) < 4 || len(f[1]) != 1 {
				return nil, fmt.Errorf("bad line %q", line)
			}
			k := excKey{POS(f[1][0]), strings.ReplaceAll(f[2], "_", " ")}
			for _, b := range f[3:] {
				db.exceptions[k] = append(db.exceptions[k], strings.ReplaceAll(b, "_", " "))
			}
		default:
			return nil, fmt.Errorf("bad line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return db, nil
}

// Senses returns the senses of word (lowercase; a collocation's words joined by spaces) and of its base forms,
// part of speech by part of speech (noun, verb, adjective, adverb), each in WordNet's order. Senses whose synset
// holds no other word are included, so ranks and counts can be compared.
func (db *DB) Senses(word string) []Sense {
	var out []Sense
	for _, pos := range []POS{Noun, Verb, Adjective, Adverb} {
		for _, lemma := range db.BaseForms(word, pos) {
			for _, e := range db.senses[lemma] {
				if e.pos != pos {
					continue
				}
				s := Sense{Lemma: lemma, POS: pos, Rank: e.rank, Count: e.count, Synset: int(e.synset), Words: []string{lemma}}
				if e.synset >= 0 {
					s.Words = db.synsets[e.synset]
				}
				out = append(out, s)
			}
		}
	}
	return out
}

// Antonyms returns the words of every synset antonymous to a sense of word or of one of its base forms ("end",
// "finish", "stop", ... for "begins"), any part of speech.
func (db *DB) Antonyms(word string) []string {
	var out []string
	seen := map[string]bool{}
	for _, pos := range []POS{Noun, Verb, Adjective, Adverb} {
		for _, lemma := range db.BaseForms(word, pos) {
			if seen[lemma] {
				continue
			}
			seen[lemma] = true
			out = append(out, db.antonyms[lemma]...)
		}
	}
	return out
}

// Related returns the words WordNet relates to word by form and meaning, any part of speech: its derivationally
// related forms ("admit": "admission", "admittance"), pertainyms ("numeric": "number") and the attributes an
// adjective gives a value of ("long": "length", "duration"). Only single words are related; word is taken as it
// is (not its base forms).
func (db *DB) Related(word string) []string { return db.related[word] }

// detachments are morphy's suffix rules per part of speech: an inflected ending and what replaces it.
var detachments = map[POS][][2]string{
	Noun:      {{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
	Verb:      {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
	Adjective: {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
}

// BaseForms returns the lemmas of pos that word is or is an inflection of, as WordNet's morphy finds them: the
// word itself when it is a lemma, its exception-list bases ("went" -> "go"), else the lemmas its suffix rules
// give ("begins" -> "begin", "boxes" -> "box"). Only lemmas with a synonym or an antonym in some sense are in
// the file, so a word without either ("deadline") has none.
func (db *DB) BaseForms(word string, pos POS) []string {
	var out []string
	add := func(l string) {
		if db.has(l, pos) && !contains(out, l) {
			out = append(out, l)
		}
	}
	add(word)
	for _, b := range db.exceptions[excKey{pos, word}] {
		add(b)
	}
	if len(out) > 0 {
		return out
	}
	for _, d := range detachments[pos] {
		if stem, ok := strings.CutSuffix(word, d[0]); ok && stem != "" {
			add(stem + d[1])
		}
	}
	return out
}

func (db *DB) has(lemma string, pos POS) bool {
	for _, e := range db.senses[lemma] {
		if e.pos == pos {
			return true
		}
	}
	return false
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
