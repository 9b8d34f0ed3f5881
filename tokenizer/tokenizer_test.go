package tokenizer

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func newTok(tb testing.TB) *Tokenizer {
	tb.Helper()
	tok, err := New()
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return tok
}

// The expected ids are those of OpenAI's Python tiktoken for o200k_base.
func TestEncodeKnownIDs(t *testing.T) {
	tok := newTok(t)
	tests := []struct {
		in   string
		want []int
	}{
		{"", nil},
		{"hello world", []int{24912, 2375}},
		{"Hello, world!", []int{13225, 11, 2375, 0}},
		{"a\nb", []int{64, 198, 65}},
		{"a\n\nb", []int{64, 279, 65}},
		// Special-token text is ordinary text: no control token (199999) for untrusted input.
		{"<|endoftext|>", []int{27, 91, 419, 1440, 919, 91, 29}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := tok.Encode(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Encode(%q) (-want +got):\n%s", tt.in, diff)
			}
			if n := tok.Count(tt.in); n != len(tt.want) {
				t.Errorf("Count(%q) = %d, want %d", tt.in, n, len(tt.want))
			}
		})
	}
}

func TestName(t *testing.T) {
	if got := newTok(t).Name(); got != "o200k_base" {
		t.Errorf("Name() = %q", got)
	}
}

func TestDecodeRoundTrip(t *testing.T) {
	tok := newTok(t)
	for _, s := range []string{"héllo 東京 🚀", "# Heading\n\n* item one\n* item two\n", strings.Repeat("Berkeley ", 50)} {
		if got := tok.Decode(tok.Encode(s)); got != s {
			t.Errorf("Decode(Encode(%q)) = %q", s, got)
		}
	}
}

func TestTruncate(t *testing.T) {
	tok := newTok(t)
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"fits", "hello world", 5, "hello world"},
		{"exact", "hello world", 2, "hello world"},
		{"cut", "hello world", 1, "hello"},
		{"zero", "hello world", 0, ""},
		{"negative", "hello world", -3, ""},
		{"empty", "", 10, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tok.Truncate(tt.in, tt.max); got != tt.want {
				t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
		})
	}
}

// Truncating inside multi-byte characters must never leave a broken UTF-8 sequence.
func TestTruncateKeepsRunesWhole(t *testing.T) {
	tok := newTok(t)
	s := strings.Repeat("東京大学の図書館🚀 ", 20)
	for max := 1; max < tok.Count(s); max++ {
		got := tok.Truncate(s, max)
		if !utf8.ValidString(got) {
			t.Fatalf("Truncate(_, %d) is not valid UTF-8: %q", max, got)
		}
		if !strings.HasPrefix(s, got) {
			t.Fatalf("Truncate(_, %d) = %q is not a prefix", max, got)
		}
		if n := tok.Count(got); n > max {
			t.Fatalf("Truncate(_, %d) has %d tokens", max, n)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	tok := newTok(t)
	text := strings.Repeat("The Academic Guide lists every course, major and minor. ", 40)
	// Texts with pieces that need merging, counted up front by a Tokenizer of their own.
	var texts [3]string
	var wants [3]int
	for k := range texts {
		texts[k] = text + strings.Repeat(" Zyzzogeton's Qxvbrn", k)
		wants[k] = newTok(t).Count(texts[k])
	}
	var wg sync.WaitGroup
	errs := make(chan int, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Half the goroutines share tok and its caches; the others build their own.
			other := tok
			if g%2 == 1 {
				other = newTok(t)
			}
			for i := range 20 {
				if n := other.Count(texts[i%3]); n != wants[i%3] {
					errs <- n
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for n := range errs {
		t.Errorf("concurrent Count = %d, want one of %v", n, wants)
	}
}

func FuzzTruncate(f *testing.F) {
	tok := newTok(f)
	f.Add("hello world", 1)
	f.Add("東京🚀 abc", 2)
	f.Add("\xff\xfe broken", 1)
	f.Fuzz(func(t *testing.T, s string, max int) {
		max %= 64
		got := tok.Truncate(s, max)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8 %q", got)
		}
		if max <= 0 && got != "" {
			t.Fatalf("Truncate(_, %d) = %q", max, got)
		}
		if n := tok.Count(got); n > max && max > 0 {
			t.Fatalf("Truncate(_, %d) has %d tokens", max, n)
		}
		if valid := string([]rune(s)); !strings.HasPrefix(valid, got) {
			t.Fatalf("%q is not a prefix of %q", got, valid)
		}
	})
}
