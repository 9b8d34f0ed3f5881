package wordnet

import (
	"bytes"
	"compress/gzip"
	"runtime"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBaseForms(t *testing.T) {
	db := Load()
	tests := []struct {
		word string
		pos  POS
		want []string
	}{
		{"begins", Verb, []string{"begin"}},
		{"began", Verb, []string{"begin"}}, // exception list
		{"went", Verb, []string{"go"}},
		{"boxes", Noun, []string{"box"}},
		{"shortest", Adjective, []string{"short"}},
		{"winners", Noun, []string{"winner"}},
		{"deadline", Noun, nil}, // a word without synonyms or antonyms is left out of the file
		{"qwzx", Noun, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, db.BaseForms(tt.word, tt.pos)); diff != "" {
			t.Errorf("BaseForms(%q, %c) (-want +got):\n%s", tt.word, tt.pos, diff)
		}
	}
}

func TestSenses(t *testing.T) {
	db := Load()
	var verbs []Sense
	for _, s := range db.Senses("begins") {
		if s.POS == Verb {
			verbs = append(verbs, s)
		}
	}
	if len(verbs) < 2 {
		t.Fatalf("Senses(begins) has %d verb senses, want several", len(verbs))
	}
	first := verbs[0]
	if first.Lemma != "begin" || first.Rank != 0 || !slices.Contains(first.Words, "commence") {
		t.Errorf("first verb sense of begins = %+v, want begin's, with commence", first)
	}
	for _, s := range verbs[1:] {
		if s.Count > first.Count {
			t.Errorf("sense %d of begin is tagged %d times, more than the first (%d)", s.Rank, s.Count, first.Count)
		}
	}
	if first.Count == 0 {
		t.Error("begin's first sense has no tag count")
	}
	// Proper names are left out: "Begin" (Menachem Begin) is no sense of the noun "begin".
	for _, s := range db.Senses("begin") {
		if s.POS == Noun && slices.Contains(s.Words, "menachem begin") {
			t.Errorf("Senses(begin) holds a proper name: %+v", s)
		}
	}
}

func TestAntonyms(t *testing.T) {
	db := Load()
	got := db.Antonyms("begins")
	for _, w := range []string{"end", "finish", "stop"} {
		if !slices.Contains(got, w) {
			t.Errorf("Antonyms(begins) = %q, want %q among them", got, w)
		}
	}
	if slices.Contains(got, "begin") || slices.Contains(got, "start") {
		t.Errorf("Antonyms(begins) = %q holds a synonym", got)
	}
	if got := db.Antonyms("deadline"); len(got) != 0 {
		t.Errorf("Antonyms(deadline) = %q, want none", got)
	}
}

func TestRelated(t *testing.T) {
	db := Load()
	for w, want := range map[string][]string{
		"number":  {"numeric", "numerical"}, // pertainyms
		"numeric": {"number"},
		"admit":   {"admission", "admittance"}, // derivationally related forms
		"long":    {"length"},                  // the attribute it is a value of
		"store":   {"storage"},
	} {
		got := db.Related(w)
		for _, r := range want {
			if !slices.Contains(got, r) {
				t.Errorf("Related(%q) = %q, want it to hold %q", w, got, r)
			}
		}
	}
	if got := db.Related("begin"); slices.Contains(got, "end") {
		t.Errorf("Related(begin) = %q holds an antonym", got)
	}
	if got := db.Related("qwertyuiop"); got != nil {
		t.Errorf("Related of a word WordNet lacks = %q", got)
	}
}

func TestIrregular(t *testing.T) {
	db := Load()
	for w, want := range map[string][]string{
		"keep":     {"kept"},
		"kept":     {"keep"},
		"write":    {"wrote", "written"},
		"child":    {"children"},
		"children": {"child"},
	} {
		got := db.Irregular(w)
		for _, f := range want {
			if !slices.Contains(got, f) {
				t.Errorf("Irregular(%q) = %q, want it to hold %q", w, got, f)
			}
		}
	}
	// A collocation's forms are left out: a passage is matched a word at a time.
	if got := db.Irregular("amicus curiae"); got != nil {
		t.Errorf("Irregular of a collocation = %q", got)
	}
	if got := db.Irregular("table"); got != nil {
		t.Errorf("Irregular of a regular word = %q", got)
	}
}

func TestParseRejectsJunk(t *testing.T) {
	for _, text := range []string{"Q what\n", "L begin v 7\n", "L x\n", "R lonely\n"} {
		if _, err := parse(gzipped(t, text)); err == nil {
			t.Errorf("parse(%q) = nil error", text)
		}
	}
}

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// BenchmarkParse measures decoding the embedded file and what the loaded DB keeps on the heap (heap-MB).
func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	var db *DB
	for b.Loop() {
		db = nil
		runtime.GC()
		runtime.ReadMemStats(&before)
		var err error
		if db, err = parse(data); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
	}
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MB")
	runtime.KeepAlive(db)
}
