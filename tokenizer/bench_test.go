package tokenizer

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// reportCPU reports the process CPU time per op since start, and the throughput it implies for bytes per
// op; the machine is shared, so wall-clock ns/op and MB/s overstate the cost.
func reportCPU(b *testing.B, start time.Duration, bytes int) {
	end, ok := cpuTime()
	if !ok || b.N == 0 {
		return
	}
	perOp := float64(end-start) / float64(b.N)
	b.ReportMetric(perOp, "cpu-ns/op")
	if bytes > 0 && perOp > 0 {
		b.ReportMetric(float64(bytes)/perOp*1e3, "cpu-MB/s")
	}
}

// benchText is about 2 KB of typical English page text.
var benchText = strings.Repeat("Students in the College of Letters & Science must complete 120 units, "+
	"including the American History and Institutions requirement (see page 42). ", 15)[:2048]

// markdownPage builds a 40 KB markdown page with headings, prose, tables and URLs, like a cleaned
// catalogue page.
func markdownPage() string {
	var sb strings.Builder
	for i := 0; sb.Len() < 40_000; i++ {
		fmt.Fprintf(&sb, "## %d. Requirements for the Major in Data Science\n\n", i)
		sb.WriteString("Students declaring the major after Fall 2016 must complete the lower-division courses " +
			"listed below with a minimum grade of C- in each; see [the advising page]" +
			"(https://data.berkeley.edu/academics/data-science-undergraduate-studies/data-science-major?ref=guide#req) " +
			"or email ds-advising@berkeley.edu.\n\n")
		sb.WriteString("| Course | Title | Units |\n|:---|:---|---:|\n")
		fmt.Fprintf(&sb, "| COMPSCI 61A | The Structure and Interpretation of Computer Programs | %d |\n", 4)
		fmt.Fprintf(&sb, "| DATA C8 | Foundations of Data Science | %d |\n| MATH 54 | Linear Algebra & Differential Equations | 4 |\n\n", 4)
		sb.WriteString("- Upper-division: DATA C100, C102, C104; STAT 140 or 134\n- Don't forget the domain emphasis!\n\n")
	}
	return sb.String()
}

func benchCount(b *testing.B, text string) {
	b.Run("ours", func(b *testing.B) {
		tok := newTok(b)
		tok.Count(text) // warm the piece cache, as in steady use
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		n := 0
		start, _ := cpuTime()
		for b.Loop() {
			n = tok.Count(text)
		}
		reportCPU(b, start, len(text))
		b.ReportMetric(float64(n), "tokens/op")
	})
	b.Run("tiktoken-go", func(b *testing.B) {
		ref := reference(b)
		b.SetBytes(int64(len(text)))
		b.ReportAllocs()
		n := 0
		start, _ := cpuTime()
		for b.Loop() {
			n = len(ref.EncodeOrdinary(text))
		}
		reportCPU(b, start, len(text))
		b.ReportMetric(float64(n), "tokens/op")
	})
}

func BenchmarkCount2KB(b *testing.B) { benchCount(b, benchText) }

func BenchmarkCount40KBMarkdown(b *testing.B) { benchCount(b, markdownPage()) }

// BenchmarkCountCold measures Count with an empty piece cache: a fresh Tokenizer each iteration.
func BenchmarkCountCold(b *testing.B) {
	text := markdownPage()
	newTok(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		tok := newTok(b)
		tok.Count(text)
	}
}

func BenchmarkEncode40KBMarkdown(b *testing.B) {
	tok := newTok(b)
	text := markdownPage()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	start, _ := cpuTime()
	for b.Loop() {
		tok.Encode(text)
	}
	reportCPU(b, start, len(text))
}

// BenchmarkCountLongRun is a 16,000-byte piece that is not a token: the heap merge keeps it near linear.
func BenchmarkCountLongRun(b *testing.B) {
	for _, s := range []string{strings.Repeat("a", 16000), strings.Repeat("ab-", 5333)} {
		b.Run(fmt.Sprintf("%.6s", s), func(b *testing.B) {
			tok := newTok(b)
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			for b.Loop() {
				tok.Count(s)
			}
		})
	}
}

func BenchmarkTruncate40KB(b *testing.B) {
	tok := newTok(b)
	text := markdownPage()
	b.ReportAllocs()
	for b.Loop() {
		tok.Truncate(text, 512)
	}
}

// BenchmarkCountCorpus counts every page of the test corpus per iteration and reports pages/s.
func BenchmarkCountCorpus(b *testing.B) {
	pages := corpusPages(b)
	tok := newTok(b)
	size := 0
	for _, p := range pages {
		size += len(p)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	start, _ := cpuTime()
	for b.Loop() {
		for _, p := range pages {
			tok.Count(p)
		}
	}
	reportCPU(b, start, size)
	b.ReportMetric(float64(len(pages))/(b.Elapsed().Seconds()/float64(b.N)), "pages/s")
}

func BenchmarkNewCached(b *testing.B) {
	newTok(b)
	b.ReportAllocs()
	for b.Loop() {
		newTok(b)
	}
}

// BenchmarkLoad measures the first New of a process: parsing the embedded ranks and building the tables.
func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := loadEncoder(O200kBase, o200kFile, o200kSpecial, (*classTable).nextPiece); err != nil {
			b.Fatal(err)
		}
	}
}
