package chunk

import (
	"strings"
	"testing"
	"unicode"
)

// small scales the thresholds down so that the short inputs a fuzzer generates cross every row of the table
// and the hard maximum.
var small = Config{MinTokens: 8, H3Tokens: 12, H4Tokens: 16, TwoBlankTokens: 20, ListItemTokens: 24,
	BlankTokens: 32, DropTokens: 3, MaxTokens: 40}

func FuzzSplit(f *testing.F) {
	tok := newTok(f)
	for _, s := range []string{
		"", "# Hi\n", "text\n```\n# code\n```\n## real\n",
		"# A\nintro text here\n\n\n\n## B\n* one\n* two\n- three\n\n#### four\nend.",
		strings.Repeat("Sentence one. Sentence two! ", 30), strings.Repeat("9", 500),
		"| a | b |\n| - | - |\n" + strings.Repeat("| x | y |\n", 40), "\xff\xfe\n\n# \xc3",
		"   \n\t\n" + strings.Repeat("* item\n", 30) + "\r\n\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, page string) {
		for _, cfg := range []Config{{}, small, {DropTokens: -1}, {DropTokens: -1, MaxTokens: 20, MinTokens: 8}} {
			checkInvariants(t, tok, page, cfg)
		}
	})
}

func checkInvariants(t *testing.T, tok interface{ Count(string) int }, page string, cfg Config) {
	t.Helper()
	c := cfg.withDefaults()
	chunks := Split(newTok(t), page, cfg)
	valid := strings.ToValidUTF8(page, "\uFFFD")
	single := len(chunks) == 1 && chunks[0].Text == trimEdges(valid)
	for i, ch := range chunks {
		if ch.Tokens > c.MaxTokens {
			t.Fatalf("cfg %+v: chunk %d has %d tokens, over the maximum", cfg, i, ch.Tokens)
		}
		if n := tok.Count(ch.Text); n != ch.Tokens {
			t.Fatalf("cfg %+v: chunk %d records %d tokens, counts %d", cfg, i, ch.Tokens, n)
		}
		if ch.Tokens <= c.DropTokens && !single {
			t.Fatalf("cfg %+v: chunk %d of %d tokens should have been dropped", cfg, i, ch.Tokens)
		}
		if ch.Text == "" || ch.Text != trimEdges(ch.Text) {
			t.Fatalf("cfg %+v: chunk %d not trimmed: %q", cfg, i, ch.Text)
		}
	}
	// In order: the chunks' non-blank content is a subsequence of the page's, and all of it when no chunk
	// may be dropped.
	got, want := nonSpace(strings.Join(texts(chunks), "")), nonSpace(valid)
	if c.DropTokens < 0 && got != want {
		t.Fatalf("cfg %+v: content changed:\n got %q\nwant %q", cfg, got, want)
	}
	rest := valid
	for i, ch := range chunks {
		k := strings.Index(rest, ch.Text)
		if k < 0 {
			t.Fatalf("cfg %+v: chunk %d is not an in-order substring of the page: %q", cfg, i, ch.Text)
		}
		rest = rest[k+len(ch.Text):]
	}
}

// Whitespace-only content is what trimming may drop; check the helper agrees with unicode.IsSpace.
func TestTrimEdges(t *testing.T) {
	for in, want := range map[string]string{
		"": "", " \n\t\n  x y \n\n": "  x y", "\n\n# H\ntext\u00a0\n": "# H\ntext", "\u2028": "",
	} {
		if got := trimEdges(in); got != want {
			t.Errorf("trimEdges(%q) = %q, want %q", in, got, want)
		}
		if strings.TrimFunc(trimEdges(in), unicode.IsSpace) != strings.TrimFunc(in, unicode.IsSpace) {
			t.Errorf("trimEdges(%q) dropped content", in)
		}
	}
}
