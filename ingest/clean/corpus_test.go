package clean

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ragproxy/ragproxy/internal/corpustest"
	"golang.org/x/net/html"
)

const berkeleyBase = "http://guide.berkeley.edu"

// cleanCorpusPage cleans the page at a site path such as "/2016-17/academic-calendar/".
func cleanCorpusPage(tb testing.TB, c *Cleaner, dir, sitePath string) Doc {
	tb.Helper()
	file := filepath.Join(dir, filepath.FromSlash(sitePath))
	if strings.HasSuffix(sitePath, "/") {
		file = filepath.Join(file, "index.html")
	}
	body, err := os.ReadFile(file)
	if err != nil {
		tb.Fatalf("read %s: %v", sitePath, err)
	}
	doc, err := c.HTML(body, berkeleyBase+sitePath)
	if err != nil {
		tb.Fatalf("clean %s: %v", sitePath, err)
	}
	return doc
}

var markup = regexp.MustCompile(`[*_|\\\s\x{a0}]+`)

// normalise lowercases s and drops whitespace, emphasis markers, table pipes
// and escapes, so a fact matches however the markdown renders it.
func normalise(s string) string {
	return markup.ReplaceAllString(strings.ToLower(s), "")
}

type evalItem struct {
	ID           string   `json:"id"`
	ExpectedURLs []string `json:"expected_urls"`
	Fact         string   `json:"fact"`
}

// evalFile returns the path of berkeley-dev.jsonl or skips the test.
func evalFile(tb testing.TB) string {
	tb.Helper()
	candidates := []string{}
	if dir := os.Getenv("RAGPROXY_TEST_EVAL"); dir != "" {
		candidates = append(candidates, dir, filepath.Join(dir, "berkeley-dev.jsonl"))
	}
	// The package is ingest/clean; the repository root is two levels up.
	candidates = append(candidates, filepath.Join("..", "..", "..", "shared", "eval", "berkeley-dev.jsonl"))
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c
		}
	}
	tb.Skip("berkeley-dev.jsonl not found (set RAGPROXY_TEST_EVAL)")
	return ""
}

// TestEvalFactsSurviveCleaning checks that every fact of the dev question set
// is still in the cleaned markdown of one of its expected pages: whatever the
// cleaner drops, it must not be the answers.
func TestEvalFactsSurviveCleaning(t *testing.T) {
	dir := corpustest.Dir(t)
	f, err := os.Open(evalFile(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var it evalItem
		if err := json.Unmarshal(sc.Bytes(), &it); err != nil {
			t.Fatalf("parse %q: %v", sc.Text(), err)
		}
		n++
		t.Run(it.ID, func(t *testing.T) {
			for _, u := range it.ExpectedURLs {
				if strings.Contains(normalise(cleanCorpusPage(t, c, dir, u).Markdown), normalise(it.Fact)) {
					return
				}
			}
			t.Errorf("fact %q is in none of the cleaned pages %v", it.Fact, it.ExpectedURLs)
		})
	}
	if err := sc.Err(); err != nil || n == 0 {
		t.Fatalf("read %d items: %v", n, err)
	}
}

// TestBerkeleyPages asserts properties of the cleaned text of real pages: the
// site chrome is gone, and the content of every tab, tables included, is kept.
func TestBerkeleyPages(t *testing.T) {
	dir := corpustest.Dir(t)
	c, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	// Text that appears in the menus, breadcrumbs, tab bar, sidebar promotions,
	// footer and print dialog of every CourseLeaf page.
	chrome := []string{
		"Degree Programs: Majors & Minors", "Schools, Departments, & Graduate Groups", "Skip to Content",
		"Berkeley Academic Guide Home", "Search Berkeley Academic Guide", "Reach Further", "Print Options",
		"Send Page to Printer", "Download PDF of this page", "Welcome from the Chancellor",
		"Academic Guide Index", "all rights reserved", "Read More [+]", "This is an archived copy",
	}
	tests := []struct {
		path  string
		title string
		want  []string // substrings of the markdown (exact)
	}{
		{"/2016-17/undergraduate/degree-programs/bioengineering/", "Bioengineering", []string{
			"# Bioengineering\n", "## About the Program\n", "## Major Requirements\n", "## Minor Requirements\n",
			"## Plan of Study\n", "## Related Courses\n", "## Faculty\n", "## Contact Information\n",
			"| Code | Title | Units |", "Linear Algebra and Differential Equations | 4 |",
			"### BIO ENG 10 Introduction to Biomedicine for Engineers 4 Units", "Daniel Fletcher, PhD",
			"[Bioengineering/Materials Science and Engineering joint major](http://guide.berkeley.edu/2016-17/undergraduate/degree-programs/bioengineering-materials-science-engineering-joint-major/)",
		}},
		{"/2016-17/academic-calendar/", "Academic Calendar", []string{
			"### Fall Semester 2016\n", "| Event | Date |", "| Instruction Begins | Wednesday, August 24, 2016 |",
			"| Spring Recess | Monday, March 27, 2017-Friday, March 31, 2017 |",
		}},
		{"/2016-17/courses/econ/", "Economics (ECON)", []string{
			"### ECON 1 Introduction to Economics 4 Units", "**Credit Restrictions:**", "Instructor: Zucman",
		}},
		{"/2016-17/tuition-fees-financial-aid/", "Tuition, Fees, and Financial Aid", []string{
			"## Tuition & Fees\n", "## Financial Aid", "13,510", "$4,364",
		}},
		{"/2016-17/graduate/degree-programs/law/", "Law", []string{"## Overview\n", "three-year curriculum"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			doc := cleanCorpusPage(t, c, dir, tt.path)
			if doc.Title != tt.title {
				t.Errorf("title = %q, want %q", doc.Title, tt.title)
			}
			for _, w := range tt.want {
				if !strings.Contains(normalise(doc.Markdown), normalise(w)) {
					t.Errorf("markdown lacks %q", w)
				} else if !strings.Contains(doc.Markdown, w) && strings.ContainsAny(w, "#|[") {
					t.Errorf("markdown has the text of %q but not its markdown form", w)
				}
			}
			for _, nav := range chrome {
				if strings.Contains(doc.Markdown, nav) {
					t.Errorf("markdown still holds site chrome %q", nav)
				}
			}
			if strings.Contains(doc.Markdown, "\n\n\n") {
				t.Error("markdown has runs of blank lines")
			}
			if strings.Contains(doc.Markdown, "](/") {
				t.Error("markdown has relative links")
			}
		})
	}
}

func BenchmarkCleanCorpus(b *testing.B) {
	dir := corpustest.Dir(b)
	var bodies [][]byte
	var urls []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		bodies = append(bodies, body)
		urls = append(urls, berkeleyBase+"/"+filepath.ToSlash(rel))
		return nil
	})
	if len(bodies) == 0 {
		b.Skip("no pages")
	}
	c, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	var size int
	for _, body := range bodies {
		size += len(body)
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for i, body := range bodies {
				if _, err := c.HTML(body, urls[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.N*len(bodies))/b.Elapsed().Seconds(), "pages/s")
		b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds()/1e6, "MB/s")
	})
	// parallel: the whole corpus per iteration, one worker per GOMAXPROCS,
	// as the ingest pipeline runs it. A fresh Cleaner per iteration, so
	// records are converted once per run as in a first ingest.
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c, err := New(Config{})
			if err != nil {
				b.Fatal(err)
			}
			eachBody(b, bodies, func(i int) error {
				_, err := c.HTML(bodies[i], urls[i])
				return err
			})
		}
		b.ReportMetric(float64(b.N*len(bodies))/b.Elapsed().Seconds(), "pages/s")
	})
	// parse: golang.org/x/net/html's parser alone (which goquery and the
	// markdown converter build on), the floor under any cleaning.
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			eachBody(b, bodies, func(i int) error {
				_, err := html.Parse(bytes.NewReader(bodies[i]))
				return err
			})
		}
		b.ReportMetric(float64(b.N*len(bodies))/b.Elapsed().Seconds(), "pages/s")
	})
}

// eachBody calls fn for every index of bodies on GOMAXPROCS workers.
func eachBody(b *testing.B, bodies [][]byte, fn func(i int) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(bodies); i = int(next.Add(1) - 1) {
				if err := fn(i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
