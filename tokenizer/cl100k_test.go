package tokenizer

import (
	"strings"
	"sync"
	"testing"

	"github.com/dlclark/regexp2"
	"github.com/google/go-cmp/cmp"
	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

var loadCL100kReference = sync.OnceValues(func() (*tiktoken.Tiktoken, error) {
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	return tiktoken.GetEncoding(CL100kBase)
})

// cl100kPattern is cl100k_base's pre-tokenisation pattern exactly as tiktoken-go compiles it (encoding.go).
var cl100kPattern = sync.OnceValue(func() *regexp2.Regexp {
	return regexp2.MustCompile(`(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`, regexp2.None)
})

func newCL100k(tb testing.TB) (*Tokenizer, *tiktoken.Tiktoken) {
	tb.Helper()
	tok, err := NewEncoding(CL100kBase)
	if err != nil {
		tb.Fatalf("NewEncoding: %v", err)
	}
	ref, err := loadCL100kReference()
	if err != nil {
		tb.Fatalf("load tiktoken-go: %v", err)
	}
	return tok, ref
}

func cl100kReferencePieces(tb testing.TB, s string) []string {
	tb.Helper()
	runes := []rune(validUTF8(s))
	var pieces []string
	m, err := cl100kPattern().FindRunesMatch(runes)
	for ; m != nil && err == nil; m, err = cl100kPattern().FindNextMatch(m) {
		pieces = append(pieces, string(runes[m.Index:m.Index+m.Length]))
	}
	if err != nil {
		tb.Fatalf("regexp2: %v", err)
	}
	return pieces
}

// cl100kInputs adds, to the o200k_base inputs, the places where the two patterns differ: contractions
// as pieces of their own, words of mixed case and marks, and punctuation before a slash.
var cl100kInputs = append([]string{
	"'s 'S x's X'S 're 'll 'd' ''s", "camelCaseWord HTTPServer iPhone", "a/b // c/",
	"नमस्ते दुनिया, यह एक परीक्षण है। हिन्दी में लिखा गया पाठ", "e\u0301\u0301x \u0301\u0301", "1/2 3//4",
}, differentialInputs...)

func TestCL100kMatchesTiktoken(t *testing.T) {
	tok, ref := newCL100k(t)
	for _, s := range cl100kInputs {
		name := s
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(cl100kReferencePieces(t, s), ourPieces(tok, s)); diff != "" {
				t.Fatalf("pieces of %q (-regexp2 +ours):\n%s", s, diff)
			}
			checkAgainstReference(t, tok, ref, s)
		})
	}
}

// Counts differ between the encodings where it matters for batching: Devanagari takes far more cl100k
// tokens than o200k ones.
func TestCL100kCountsDevanagariHigher(t *testing.T) {
	cl, _ := newCL100k(t)
	o := newTok(t)
	s := strings.Repeat("भारत सरकार की आधिकारिक वेबसाइट पर आपका स्वागत है। ", 20)
	if c, n := cl.Count(s), o.Count(s); c <= 2*n {
		t.Errorf("cl100k %d tokens, o200k %d: want cl100k over twice o200k", c, n)
	}
	if got := cl.Name(); got != CL100kBase {
		t.Errorf("Name() = %q, want %q", got, CL100kBase)
	}
}

func TestNewEncodingUnknown(t *testing.T) {
	if _, err := NewEncoding("p50k_base"); err == nil {
		t.Fatal("NewEncoding(p50k_base) succeeded, want an error")
	}
}

func TestForModel(t *testing.T) {
	for model, want := range map[string]string{
		"text-embedding-3-small": CL100kBase,
		"text-embedding-3-large": CL100kBase,
		"text-embedding-ada-002": CL100kBase,
		"gpt-4":                  CL100kBase,
		"gpt-4-turbo":            CL100kBase,
		"gpt-3.5-turbo":          CL100kBase,
		"gpt-4o":                 O200kBase,
		"gpt-4o-mini":            O200kBase,
		"gpt-4.1-mini":           O200kBase,
		"o3-mini":                O200kBase,
		"gpt-5-mini":             O200kBase,
		"some-local-model":       O200kBase,
	} {
		if got := ForModel(model); got != want {
			t.Errorf("ForModel(%q) = %q, want %q", model, got, want)
		}
	}
}

func FuzzCL100kMatchesTiktoken(f *testing.F) {
	tok, ref := newCL100k(f)
	for _, s := range cl100kInputs {
		if len(s) < 200 {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			s = s[:4096]
		}
		if diff := cmp.Diff(cl100kReferencePieces(t, s), ourPieces(tok, s)); diff != "" {
			t.Fatalf("pieces of %q (-regexp2 +ours):\n%s", s, diff)
		}
		checkAgainstReference(t, tok, ref, s)
	})
}

// BenchmarkCountCL100k40KBMarkdown is BenchmarkCount40KBMarkdown for cl100k_base.
func BenchmarkCountCL100k40KBMarkdown(b *testing.B) {
	text := markdownPage()
	b.Run("ours", func(b *testing.B) {
		tok, _ := newCL100k(b)
		tok.Count(text)
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
		_, ref := newCL100k(b)
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

// TestCL100kCorpusMatchesTiktoken is TestCorpusMatchesTiktoken for cl100k_base.
func TestCL100kCorpusMatchesTiktoken(t *testing.T) {
	pages := corpusPages(t)
	tok, ref := newCL100k(t)
	for i, p := range pages {
		if testing.Short() && len(p) > 20_000 {
			p = p[:20_000]
		}
		if want, got := ref.EncodeOrdinary(p), tok.Encode(p); !cmp.Equal(want, got) {
			for _, line := range strings.SplitAfter(p, "\n") {
				if w, g := ref.EncodeOrdinary(line), tok.Encode(line); !cmp.Equal(w, g) && len(w) > 0 {
					t.Fatalf("page %d: line %q (-tiktoken-go +ours):\n%s", i, line, cmp.Diff(w, g))
				}
			}
			t.Fatalf("page %d: tokens differ (%d tiktoken-go, %d ours)", i, len(want), len(got))
		}
	}
}
