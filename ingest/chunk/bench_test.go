package chunk

import (
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/internal/corpustest"
)

var (
	reDrop    = regexp.MustCompile(`(?is)<(script|style|head|nav|header|footer)\b.*?</(script|style|head|nav|header|footer)>`)
	reHeading = regexp.MustCompile(`(?i)<h([1-6])\b[^>]*>`)
	reBreak   = regexp.MustCompile(`(?i)</h[1-6]>|</?p\b[^>]*>|<br\b[^>]*>|</?(div|table|tr|ul|ol)\b[^>]*>`)
	reItem    = regexp.MustCompile(`(?i)<li\b[^>]*>`)
	reTag     = regexp.MustCompile(`<[^>]*>`)
	reSpaces  = regexp.MustCompile(`[ \t]+`)
	reBlanks  = regexp.MustCompile(`\n[ \t]*\n[\s]*\n`)
)

// crudeMarkdown turns HTML into rough markdown (headings, list items, paragraphs) without the project's
// cleaner, which is enough to give the chunker realistic block structure and sizes.
func crudeMarkdown(h string) string {
	h = reDrop.ReplaceAllString(h, "")
	h = reHeading.ReplaceAllStringFunc(h, func(m string) string {
		return "\n\n" + strings.Repeat("#", int(reHeading.FindStringSubmatch(m)[1][0]-'0')) + " "
	})
	h = reBreak.ReplaceAllString(h, "\n\n")
	h = reItem.ReplaceAllString(h, "\n- ")
	h = html.UnescapeString(reTag.ReplaceAllString(h, ""))
	h = reSpaces.ReplaceAllString(h, " ")
	return reBlanks.ReplaceAllString(h, "\n\n\n")
}

func corpusMarkdown(b *testing.B) []string {
	dir := corpustest.Dir(b)
	var pages []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		pages = append(pages, crudeMarkdown(string(data)))
		return nil
	})
	if err != nil {
		b.Fatalf("read corpus: %v", err)
	}
	return pages
}

// BenchmarkSplitCorpus chunks every page of the test corpus per iteration.
func BenchmarkSplitCorpus(b *testing.B) {
	tok := newTok(b)
	pages := corpusMarkdown(b)
	size := 0
	for _, p := range pages {
		size += len(p)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	chunks, tokens := 0, 0
	for b.Loop() {
		chunks, tokens = 0, 0
		for _, p := range pages {
			for _, c := range Split(tok, p, Config{}) {
				chunks++
				tokens += c.Tokens
			}
		}
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(chunks)/sec, "chunks/s")
	b.ReportMetric(float64(len(pages))/sec, "pages/s")
	b.ReportMetric(float64(chunks), "chunks")
	b.ReportMetric(float64(tokens)/float64(chunks), "tokens/chunk")
}

// BenchmarkSplitSynthetic chunks a 40 KB page of headings, paragraphs and lists.
func BenchmarkSplitSynthetic(b *testing.B) {
	tok := newTok(b)
	var sb strings.Builder
	for i := 0; sb.Len() < 40_000; i++ {
		sb.WriteString("## Section heading\n\nThe program requires seven upper-division courses in the major. ")
		sb.WriteString("Students must maintain a 2.0 grade point average in all courses.\n\n")
		sb.WriteString("- Course one: introduction\n- Course two: methods\n- Course three: seminar\n\n")
	}
	page := sb.String()
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n = len(Split(tok, page, Config{}))
	}
	b.ReportMetric(float64(n)/(b.Elapsed().Seconds()/float64(b.N)), "chunks/s")
}
