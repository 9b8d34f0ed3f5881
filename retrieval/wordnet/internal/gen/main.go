// Command gen derives the compact WordNet file the wordnet package embeds from the WordNet 3.0 database files
// (data.*, index.*, *.exc and cntlist.rev, as Debian's wordnet-base installs them in /usr/share/wordnet):
//
//	go run ./internal/gen -dict /usr/share/wordnet -out wordnet.txt.gz
//
// It keeps what query expansion and passage selection read: each word's senses in WordNet's order with their tag
// counts, the other words of each sense's synset, the words of every synset antonymous to one of the word's
// senses, the words related to it by form and meaning (derivationally related forms, pertainyms and attributes),
// and the exception lists for inflected forms. Glosses, examples and every other pointer are dropped. The output is
// deterministic: the same database gives the same bytes.
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"log"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// posFiles are WordNet's parts of speech with their file suffixes and one-letter codes.
var posFiles = []struct{ name, code string }{{"noun", "n"}, {"verb", "v"}, {"adj", "a"}, {"adv", "r"}}

// ssTypeNumber is the sense key's number for a synset type (WordNet's senseidx(5WN)).
var ssTypeNumber = map[string]int{"n": 1, "v": 2, "a": 3, "r": 4, "s": 5}

type member struct {
	word  string // '_' between the words of a collocation; proper names (capitalised) are left out
	lexID int
}

// relation is a pointer to a synset ("pos+offset") relating words by form and meaning: from the synset's src-th
// word to the target's dst-th, or between all their words when src is 0.
type relation struct {
	target   string
	src, dst int
}

type synset struct {
	pos      string // file code: n, v, a, r
	ssType   string // n, v, a, s, r
	lexFile  int
	members  []member
	antonyms []string // keys (pos+offset) of synsets a member is an antonym of
	related  []relation
	words    []string // every word in file order, "" for a proper name: lexical pointers number them
	head     string   // for an adjective satellite, the key of its head synset
	id       int      // line number among the written synsets, -1 when not written
}

func main() {
	dict := flag.String("dict", "/usr/share/wordnet", "folder holding the WordNet 3.0 database files")
	out := flag.String("out", "wordnet.txt.gz", "file to write")
	flag.Parse()
	if err := run(*dict, *out); err != nil {
		log.Fatal(err)
	}
}

func run(dict, out string) error {
	synsets := map[string]*synset{} // pos code + offset -> synset
	var order []string              // synset keys in file order
	for _, p := range posFiles {
		err := eachLine(filepath.Join(dict, "data."+p.name), func(line string) error {
			s, off, err := parseData(line, p.code)
			if err != nil || s == nil {
				return err
			}
			key := p.code + off
			synsets[key] = s
			order = append(order, key)
			return nil
		})
		if err != nil {
			return err
		}
	}
	counts := map[string]int{}
	if err := eachLine(filepath.Join(dict, "cntlist.rev"), func(line string) error {
		f := strings.Fields(line)
		if len(f) != 3 {
			return fmt.Errorf("cntlist.rev: bad line %q", line)
		}
		n, err := strconv.Atoi(f[2])
		counts[strings.ToLower(f[0])] = n
		return err
	}); err != nil {
		return err
	}

	// Synsets with two or more members are written and numbered; a sense in a synset of one word expands to
	// nothing and is written as "-".
	next := 0
	for _, key := range order {
		s := synsets[key]
		s.id = -1
		if len(s.members) >= 2 {
			s.id = next
			next++
		}
	}

	var b strings.Builder
	b.WriteString("# Derived from WordNet 3.0 by retrieval/wordnet/internal/gen; WordNet 3.0 Copyright 2006 by Princeton University.\n")
	b.WriteString("# All rights reserved. See LICENSE-WordNet for the licence, which applies to this file.\n")
	for _, key := range order {
		if s := synsets[key]; s.id >= 0 {
			b.WriteString("S")
			for _, m := range s.members {
				b.WriteString(" " + m.word)
			}
			b.WriteString("\n")
		}
	}

	antonyms := map[string]map[string]bool{} // word -> words of synsets antonymous to one of its senses
	for _, p := range posFiles {
		err := eachLine(filepath.Join(dict, "index."+p.name), func(line string) error {
			lemma, offsets, err := parseIndex(line)
			if err != nil || lemma == "" {
				return err
			}
			var senses []string
			useful := false
			for _, off := range offsets {
				s := synsets[p.code+off]
				if s == nil {
					return fmt.Errorf("index.%s: %s: no synset %s", p.name, lemma, off)
				}
				sense := "-"
				if s.id >= 0 {
					sense = strconv.Itoa(s.id)
					useful = true
				}
				if n := counts[senseKey(lemma, s, synsets)]; n > 0 {
					sense += ":" + strconv.Itoa(n)
				}
				senses = append(senses, sense)
				for _, a := range s.antonyms {
					for _, m := range synsets[a].members {
						if m.word != lemma {
							if antonyms[lemma] == nil {
								antonyms[lemma] = map[string]bool{}
							}
							antonyms[lemma][m.word] = true
						}
					}
				}
			}
			if useful || len(antonyms[lemma]) > 0 { // a lemma with neither adds nothing to a query
				fmt.Fprintf(&b, "L %s %s %s\n", lemma, p.code, strings.Join(senses, " "))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	words := make([]string, 0, len(antonyms))
	for w := range antonyms {
		words = append(words, w)
	}
	sort.Strings(words)
	for _, w := range words {
		ants := make([]string, 0, len(antonyms[w]))
		for a := range antonyms[w] {
			ants = append(ants, a)
		}
		sort.Strings(ants)
		fmt.Fprintf(&b, "A %s %s\n", w, strings.Join(ants, " "))
	}
	writeRelated(&b, synsets, order)
	for _, p := range posFiles {
		err := eachLine(filepath.Join(dict, p.name+".exc"), func(line string) error {
			f := strings.Fields(strings.ToLower(line))
			if len(f) < 2 {
				return fmt.Errorf("%s.exc: bad line %q", p.name, line)
			}
			fmt.Fprintf(&b, "X %s %s\n", p.code, strings.Join(f, " "))
			return nil
		})
		if err != nil {
			return err
		}
	}
	return writeGzip(out, b.String())
}

// writeRelated writes, for each single word, the words WordNet relates to it by form and meaning, "R word
// related...", sorted: a lexical pointer relates its two words both ways, a semantic one (an attribute's) every
// word of one synset to every word of the other. Proper names and collocations are left out.
func writeRelated(b *strings.Builder, synsets map[string]*synset, order []string) {
	related := map[string]map[string]bool{}
	add := func(a, c string) {
		if a == "" || c == "" || a == c || strings.Contains(a, "_") || strings.Contains(c, "_") {
			return
		}
		if related[a] == nil {
			related[a] = map[string]bool{}
		}
		related[a][c] = true
	}
	for _, key := range order {
		s := synsets[key]
		for _, r := range s.related {
			t := synsets[r.target]
			switch {
			case t == nil:
			case r.src == 0:
				for _, a := range s.words {
					for _, c := range t.words {
						add(a, c)
						add(c, a)
					}
				}
			case r.src <= len(s.words) && r.dst <= len(t.words) && r.dst > 0:
				add(s.words[r.src-1], t.words[r.dst-1])
				add(t.words[r.dst-1], s.words[r.src-1])
			}
		}
	}
	for _, w := range slices.Sorted(maps.Keys(related)) {
		fmt.Fprintf(b, "R %s %s\n", w, strings.Join(slices.Sorted(maps.Keys(related[w])), " "))
	}
}

// parseData reads one line of a data file: "offset lex_filenum ss_type w_cnt word lex_id ... p_cnt ptr... | gloss"
// (WordNet's wndb(5WN)). Licence lines, which start with spaces, give a nil synset.
func parseData(line, pos string) (*synset, string, error) {
	if strings.HasPrefix(line, " ") {
		return nil, "", nil
	}
	if i := strings.Index(line, " | "); i >= 0 {
		line = line[:i]
	}
	f := strings.Fields(line)
	bad := func() (*synset, string, error) { return nil, "", fmt.Errorf("data: bad line %.60q", line) }
	if len(f) < 4 {
		return bad()
	}
	lexFile, err1 := strconv.Atoi(f[1])
	nWords, err2 := strconv.ParseInt(f[3], 16, 32)
	if err1 != nil || err2 != nil || len(f) < 4+2*int(nWords)+1 {
		return bad()
	}
	s := &synset{pos: pos, ssType: f[2], lexFile: lexFile}
	for i := 0; i < int(nWords); i++ {
		w := f[4+2*i]
		if strings.ToLower(w) != w {
			s.words = append(s.words, "")
			continue // a proper name ("Begin", "Apache"): lowercased, it would pass for an everyday word
		}
		if j := strings.IndexByte(w, '('); j > 0 { // adjective markers: "(p)", "(a)", "(ip)"
			w = w[:j]
		}
		s.words = append(s.words, w)
		lexID, err := strconv.ParseInt(f[5+2*i], 16, 32)
		if err != nil {
			return bad()
		}
		if !slices.ContainsFunc(s.members, func(m member) bool { return m.word == w }) {
			s.members = append(s.members, member{w, int(lexID)})
		}
	}
	k := 4 + 2*int(nWords)
	nPtrs, err := strconv.Atoi(f[k])
	if err != nil || len(f) < k+1+4*nPtrs {
		return bad()
	}
	for i := 0; i < nPtrs; i++ {
		sym, off, ptrPos := f[k+1+4*i], f[k+2+4*i], f[k+3+4*i]
		if ptrPos == "s" {
			ptrPos = "a"
		}
		switch sym {
		case "+", "\\", "=": // derivationally related form, pertainym, attribute
			st := f[k+4+4*i]
			src, err1 := strconv.ParseInt(st[:2], 16, 32)
			dst, err2 := strconv.ParseInt(st[2:], 16, 32)
			if len(st) != 4 || err1 != nil || err2 != nil {
				return bad()
			}
			s.related = append(s.related, relation{ptrPos + off, int(src), int(dst)})
		case "!":
			s.antonyms = append(s.antonyms, ptrPos+off)
		case "&":
			if s.ssType == "s" && s.head == "" {
				s.head = ptrPos + off
			}
		}
	}
	return s, f[0], nil
}

// parseIndex reads one line of an index file: "lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt
// tagsense_cnt synset_offset..."; the offsets are in WordNet's sense order (most frequent first).
func parseIndex(line string) (string, []string, error) {
	if strings.HasPrefix(line, " ") {
		return "", nil, nil
	}
	f := strings.Fields(line)
	if len(f) < 4 {
		return "", nil, fmt.Errorf("index: bad line %.60q", line)
	}
	nSynsets, err1 := strconv.Atoi(f[2])
	nPtrs, err2 := strconv.Atoi(f[3])
	start := 4 + nPtrs + 2
	if err1 != nil || err2 != nil || len(f) != start+nSynsets {
		return "", nil, fmt.Errorf("index: bad line %.60q", line)
	}
	return f[0], f[start:], nil
}

// senseKey is the key cntlist.rev gives a lemma's sense: lemma%ss_type:lex_filenum:lex_id:head_word:head_id.
func senseKey(lemma string, s *synset, synsets map[string]*synset) string {
	lexID := 0
	for _, m := range s.members {
		if m.word == lemma {
			lexID = m.lexID
		}
	}
	head, headID := "", ""
	if h := synsets[s.head]; s.ssType == "s" && h != nil && len(h.members) > 0 {
		head, headID = h.members[0].word, fmt.Sprintf("%02d", h.members[0].lexID)
	}
	return fmt.Sprintf("%s%%%d:%02d:%02d:%s:%s", lemma, ssTypeNumber[s.ssType], s.lexFile, lexID, head, headID)
}

func eachLine(path string, fn func(line string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if err := fn(sc.Text()); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
	}
	return sc.Err()
}

func writeGzip(path, text string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		f.Close()
		return err
	}
	if _, err := zw.Write([]byte(text)); err != nil {
		f.Close()
		return err
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
