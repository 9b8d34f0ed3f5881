package tokenizer

import "testing"

func TestPiecesCount(t *testing.T) {
	tok := newTok(t)
	text := "# Title\n\nA paragraph ends.\n\n\n- item one\n- item two/\n/three\n\n| a | b |\n|---|---|\n\n" +
		"数学科学 ΣΟΦΊΑ café   \n\n   indented  \r\n\r\nDon't stop 12345 words's  end.   \n"
	p := tok.Pieces(text, nil)
	for a := 0; a <= len(text); a++ {
		for b := a; b <= len(text); b++ {
			if !isRuneStart(text, a) || !isRuneStart(text, b) {
				continue
			}
			if got, want := p.Count(a, b), tok.Count(text[a:b]); got != want {
				t.Fatalf("Count(%d, %d) of %q = %d, want %d", a, b, text[a:b], got, want)
			}
		}
	}
}

func isRuneStart(s string, i int) bool { return i == len(s) || i == 0 || s[i]&0xc0 != 0x80 }

func FuzzPiecesCount(f *testing.F) {
	f.Add("Hello, world!\n\nNext paragraph.\n", 3, 20)
	f.Add("a.\n\n\nb  \n c", 0, 9)
	f.Add("  x\r\n\r\n y's ΣΟΦΊΑ   z", 2, 17)
	f.Fuzz(func(t *testing.T, s string, a, b int) {
		if a < 0 || b < 0 {
			return
		}
		a, b = a%(len(s)+1), b%(len(s)+1)
		if a > b {
			a, b = b, a
		}
		if !isRuneStart(s, a) || !isRuneStart(s, b) {
			return
		}
		tok := newTok(t)
		p := tok.Pieces(s, nil)
		if got, want := p.Count(a, b), tok.Count(s[a:b]); got != want {
			t.Fatalf("Count(%d, %d) of %q = %d, want Count(%q) = %d", a, b, s, got, s[a:b], want)
		}
	})
}
