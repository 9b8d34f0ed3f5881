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
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"slices"
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

// DB is the loaded WordNet data. It is laid out to be small on the heap: every word is kept once, and the senses
// and synsets are flat slices that the maps point into.
type DB struct {
	synsetWords []string // the words of every synset, one synset after the other
	synsetStart []int32  // synset i is synsetWords[synsetStart[i]:synsetStart[i+1]]
	entries     []entry
	senses      map[string]span // lemma -> its senses in entries, in WordNet order, every part of speech
	antonyms    map[string][]string
	related     map[string][]string
	exceptions  map[excKey][]string
	irregular   map[string][]string // a verb's or noun's irregular forms, and such a form's bases (Irregular)
}

type entry struct {
	synset int32 // index of the synset, -1 for a synset of the lemma alone
	count  int32
	rank   uint16
	pos    POS
}

// span is a run of entries.
type span struct{ start, n int32 }

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
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	// The file joins a collocation's words with "_"; text is the file with spaces there, the same length, so a
	// field found in raw is the word at the same offsets of text. Each distinct word is then kept once, in a
	// string of its own (92,000 words, 1 MB), rather than the whole text (4.4 MB).
	text := string(bytes.ReplaceAll(raw, []byte("_"), []byte(" ")))
	kept := make(map[string]string, 1<<17)
	keep := func(ws []string) {
		for i, w := range ws {
			k, ok := kept[w]
			if !ok {
				k = strings.Clone(w)
				kept[k] = k
			}
			ws[i] = k
		}
	}
	count := func(kind string) int { return bytes.Count(raw, []byte("\n"+kind+" ")) }
	db := &DB{synsetStart: make([]int32, 1, count("S")+1), senses: make(map[string]span, count("L")),
		antonyms: make(map[string][]string, count("A")), related: make(map[string][]string, count("R")),
		exceptions: map[excKey][]string{}, irregular: map[string][]string{}}
	var fields []string // the current line's fields, reused
	var related []string
	for off := 0; off < len(raw); {
		end := bytes.IndexByte(raw[off:], '\n')
		if end < 0 {
			end = len(raw)
		} else {
			end += off
		}
		line := raw[off:end]
		fields = fieldsOf(fields[:0], text, line, off)
		off = end + 1
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		f := fields
		bad := func() error { return fmt.Errorf("bad line %q", line) }
		if len(f) < 2 {
			return nil, bad()
		}
		switch f[0] {
		case "S", "A", "R":
			keep(f[1:])
		case "L":
			keep(f[1:2])
		case "X":
			keep(f[2:])
		}
		switch f[0] {
		case "S":
			db.synsetWords = append(db.synsetWords, f[1:]...)
			db.synsetStart = append(db.synsetStart, int32(len(db.synsetWords)))
		case "L":
			if len(f) < 4 || len(f[2]) != 1 {
				return nil, bad()
			}
			lemma, pos := f[1], POS(f[2][0])
			sp, ok := db.senses[lemma]
			if ok && int(sp.start+sp.n) != len(db.entries) {
				// The lemma's earlier senses are not the last ones: move them to the end to append to them.
				moved := int32(len(db.entries))
				db.entries = append(db.entries, db.entries[sp.start:sp.start+sp.n]...)
				sp.start = moved
			} else if !ok {
				sp.start = int32(len(db.entries))
			}
			for rank, s := range f[3:] {
				e := entry{pos: pos, rank: uint16(rank), synset: -1}
				id, n, hasCount := strings.Cut(s, ":")
				if hasCount {
					c, err := strconv.ParseInt(n, 10, 32)
					if err != nil {
						return nil, bad()
					}
					e.count = int32(c)
				}
				if id != "-" {
					n, err := strconv.Atoi(id)
					if err != nil || n < 0 || n >= len(db.synsetStart)-1 {
						return nil, bad()
					}
					e.synset = int32(n)
				}
				db.entries = append(db.entries, e)
				sp.n++
			}
			db.senses[lemma] = sp
		case "A":
			db.antonyms[f[1]] = append(db.antonyms[f[1]], f[2:]...)
		case "R":
			if len(f) < 3 {
				return nil, bad()
			}
			if cap(related)-len(related) < len(f)-2 {
				related = make([]string, 0, max(4096, len(f)-2))
			}
			related = append(related, f[2:]...)
			db.related[f[1]] = related[len(related)-(len(f)-2) : len(related) : len(related)]
		case "X":
			if len(f) < 4 || len(f[1]) != 1 {
				return nil, bad()
			}
			k := excKey{POS(f[1][0]), f[2]}
			db.exceptions[k] = append(db.exceptions[k], f[3:]...)
			if k.pos == Verb || k.pos == Noun {
				for _, base := range f[3:] {
					db.addIrregular(base, k.form)
					db.addIrregular(k.form, base)
				}
			}
		default:
			return nil, bad()
		}
	}
	db.entries = slices.Clip(db.entries)
	db.synsetWords = slices.Clip(db.synsetWords)
	return db, nil
}

// fieldsOf appends the space-separated fields of line, which starts at offset off of raw, taking each from
// text at the same offsets.
func fieldsOf(dst []string, text string, line []byte, off int) []string {
	for i := 0; i < len(line); {
		if line[i] == ' ' || line[i] == '\t' || line[i] == '\r' {
			i++
			continue
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' && line[j] != '\r' {
			j++
		}
		dst = append(dst, text[off+i:off+j])
		i = j
	}
	return dst
}

// synset returns the words of synset i.
func (db *DB) synset(i int32) []string {
	start, end := db.synsetStart[i], db.synsetStart[i+1]
	return db.synsetWords[start:end:end]
}

// lemmaSenses returns the senses of lemma, every part of speech.
func (db *DB) lemmaSenses(lemma string) []entry {
	sp := db.senses[lemma]
	return db.entries[sp.start : sp.start+sp.n]
}

// Senses returns the senses of word (lowercase; a collocation's words joined by spaces) and of its base forms,
// part of speech by part of speech (noun, verb, adjective, adverb), each in WordNet's order. Senses whose synset
// holds no other word are included, so ranks and counts can be compared.
func (db *DB) Senses(word string) []Sense {
	var out []Sense
	for _, pos := range []POS{Noun, Verb, Adjective, Adverb} {
		for _, lemma := range db.BaseForms(word, pos) {
			for _, e := range db.lemmaSenses(lemma) {
				if e.pos != pos {
					continue
				}
				s := Sense{Lemma: lemma, POS: pos, Rank: int(e.rank), Count: int(e.count), Synset: int(e.synset), Words: []string{lemma}}
				if e.synset >= 0 {
					s.Words = db.synset(e.synset)
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

// Irregular returns the other forms of word that WordNet's exception lists pair it with, as a verb or a noun: a
// base's irregular inflections ("keep" -> "kept", "write" -> "wrote", "written"; "child" -> "children") and an
// inflection's bases ("kept" -> "keep"). They are the same word, which a stemmer that cuts suffixes mostly does
// not join; the lists also hold some it does ("running"), which a caller that stems can drop.
func (db *DB) Irregular(word string) []string { return db.irregular[word] }

// addIrregular records form as an irregular form of word (Irregular), once.
func (db *DB) addIrregular(word, form string) {
	if word == form || strings.Contains(form, " ") || contains(db.irregular[word], form) {
		return
	}
	db.irregular[word] = append(db.irregular[word], form)
}

func (db *DB) has(lemma string, pos POS) bool {
	for _, e := range db.lemmaSenses(lemma) {
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
