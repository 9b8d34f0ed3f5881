// Package corpustest loads the Berkeley test corpus (RAGPROXY_TEST_CORPUS) as plain text pages, fixed-size
// chunks and dev questions, for the tests and benchmarks of the search packages. Tests using it skip when the
// variable is unset. Its text extraction is deliberately crude (the text of <main>, scripts and styles dropped);
// the real cleaner lives in ingest.
package corpustest

import (
	"bufio"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/html"
)

// EnvVar names the environment variable holding the corpus directory.
const EnvVar = "RAGPROXY_TEST_CORPUS"

// Page is one corpus page.
type Page struct {
	Path  string // URL path, e.g. "/2016-17/academic-calendar/"
	Title string
	Text  string
}

// Chunk is a contiguous passage of a page.
type Chunk struct {
	Page int
	Text string
}

// Question is one line of the dev question set.
type Question struct {
	ID           string   `json:"id"`
	Question     string   `json:"question"`
	ExpectedURLs []string `json:"expected_urls"`
	Fact         string   `json:"fact"`
}

// BaseURL is the address the Berkeley mirror was saved from: a file DIR/a/b/index.html is BaseURL + "a/b/".
const BaseURL = "http://guide.berkeley.edu/"

// QuestionsPath returns the dev question set: RAGPROXY_TEST_EVAL when set, else ../../eval/berkeley-dev.jsonl
// from the corpus directory (corpus/berkeley-guide and eval/ side by side). It skips tb when the corpus is not
// configured.
func QuestionsPath(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("RAGPROXY_TEST_EVAL"); p != "" {
		return p
	}
	return filepath.Join(Dir(tb), "..", "..", "eval", "berkeley-dev.jsonl")
}

// Dir returns the corpus directory or skips tb.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir := os.Getenv(EnvVar)
	if dir == "" {
		tb.Skip(EnvVar + " is not set")
	}
	return dir
}

type loaded struct {
	pages []Page
	err   error
}

var cache sync.Map // dir -> *loaded; loading is deterministic, so sharing the result is safe

// Pages returns the corpus pages sorted by path, or skips tb.
func Pages(tb testing.TB) []Page {
	tb.Helper()
	dir := Dir(tb)
	v, _ := cache.LoadOrStore(dir, &sync.Once{})
	if l, ok := v.(*loaded); ok {
		if l.err != nil {
			tb.Fatal(l.err)
		}
		return l.pages
	}
	once := v.(*sync.Once)
	once.Do(func() {
		pages, err := load(dir)
		cache.Store(dir, &loaded{pages, err})
	})
	v, _ = cache.Load(dir)
	l := v.(*loaded)
	if l.err != nil {
		tb.Fatal(l.err)
	}
	return l.pages
}

func load(dir string) ([]Page, error) {
	var pages []Page
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		title, text := extract(f)
		rel, _ := filepath.Rel(dir, path)
		rel = "/" + filepath.ToSlash(rel)
		rel = strings.TrimSuffix(rel, "index.html")
		pages = append(pages, Page{Path: rel, Title: title, Text: text})
		return nil
	})
	sort.Slice(pages, func(i, j int) bool { return pages[i].Path < pages[j].Path })
	return pages, err
}

func extract(f *os.File) (title, text string) {
	z := html.NewTokenizer(bufio.NewReader(f))
	var b strings.Builder
	inMain, skip, inTitle := 0, 0, false
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.TrimSpace(title), b.String()
		case html.StartTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "main":
				inMain++
			case "script", "style", "nav", "noscript":
				skip++
			case "title":
				inTitle = true
			case "p", "div", "li", "tr", "h1", "h2", "h3", "h4", "br":
				b.WriteString("\n")
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "main":
				inMain--
			case "script", "style", "nav", "noscript":
				skip--
			case "title":
				inTitle = false
			case "p", "li", "tr", "h1", "h2", "h3", "h4":
				b.WriteString("\n")
			}
		case html.TextToken:
			t := string(z.Text())
			if inTitle {
				title += t
			}
			if inMain > 0 && skip == 0 {
				if s := strings.TrimSpace(t); s != "" {
					b.WriteString(s)
					b.WriteByte(' ')
				}
			}
		}
	}
}

// Chunks splits every page into passages of about maxChars bytes at line boundaries.
func Chunks(pages []Page, maxChars int) []Chunk {
	var out []Chunk
	for i, p := range pages {
		var cur strings.Builder
		for _, line := range strings.Split(p.Text, "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			if cur.Len() > 0 && cur.Len()+len(line) > maxChars {
				out = append(out, Chunk{Page: i, Text: cur.String()})
				cur.Reset()
			}
			cur.WriteString(line)
			cur.WriteByte('\n')
		}
		if cur.Len() > 0 {
			out = append(out, Chunk{Page: i, Text: cur.String()})
		}
	}
	return out
}

// Questions returns the dev questions (see QuestionsPath), or skips tb.
func Questions(tb testing.TB) []Question {
	tb.Helper()
	path := QuestionsPath(tb)
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Skipf("dev questions: %v", err)
	}
	var qs []Question
	for _, line := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var q Question
		if err := json.Unmarshal([]byte(line), &q); err != nil {
			tb.Fatalf("dev questions: %v", err)
		}
		qs = append(qs, q)
	}
	return qs
}
