package chunk

import (
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/tokenizer"
)

func newTok(tb testing.TB) *tokenizer.Tokenizer {
	tb.Helper()
	tok, err := tokenizer.New()
	if err != nil {
		tb.Fatalf("tokenizer.New: %v", err)
	}
	return tok
}

// line returns one line of text (with its newline) that counts exactly n tokens, the way the chunker counts
// a block: "Start", n-2 times " more", "\n".
func line(tb testing.TB, tok *tokenizer.Tokenizer, n int) string {
	tb.Helper()
	s := "Start" + strings.Repeat(" more", n-2) + "\n"
	if got := tok.Count(s); got != n {
		tb.Fatalf("line(%d) counts %d tokens", n, got)
	}
	return s
}

func texts(chunks []Chunk) []string {
	var out []string
	for _, c := range chunks {
		out = append(out, c.Text)
	}
	return out
}

// TestTableRows checks each row of the FHNW prototype's Table 1 end to end: a chunk of `prefix` tokens followed by
// `boundary` ends there exactly when `prefix` has reached the row's threshold.
func TestTableRows(t *testing.T) {
	tok := newTok(t)
	tests := []struct {
		name     string
		prefix   int
		boundary string
		split    bool
	}{
		{"H2 below 200", 199, "## Two\n", false},
		{"H2 at 200", 200, "## Two\n", true},
		{"H1 at 200", 200, "# One\n", true},
		{"H3 at 299", 299, "### Three\n", false},
		{"H3 at 300", 300, "### Three\n", true},
		{"H4 at 399", 399, "#### Four\n", false},
		{"H4 at 400", 400, "#### Four\n", true},
		{"3 blank lines at 399", 399, "\n\n\n", false},
		{"3 blank lines at 400", 400, "\n\n\n", true},
		{"2 blank lines at 499", 499, "\n\n", false},
		{"2 blank lines at 500", 500, "\n\n", true},
		{"star item at 599", 599, "* item\n", false},
		{"star item at 600", 600, "* item\n", true},
		{"dash item at 600", 600, "- item\n", true},
		{"blank line at 799", 799, "\n", false},
		{"blank line at 800", 800, "\n", true},
		{"H5 never", 900, "##### Five\n", false},
		{"H6 never", 900, "###### Six\n", false},
		{"thematic break is no item", 700, "* * *\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			head := line(t, tok, tt.prefix)
			tail := "Tail" + strings.Repeat(" more", 250) + "\n"
			got := texts(Split(tok, head+tt.boundary+tail, Config{}))
			want := []string{trimEdges(head + tt.boundary + tail)}
			if tt.split {
				want = []string{trimEdges(head), trimEdges(tt.boundary + tail)}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRulesData checks the table as data: for each row, the block kinds it stops at once its threshold is
// reached, and that nothing stops a chunk below MinTokens.
func TestRulesData(t *testing.T) {
	rules := Config{}.withDefaults().rules()
	blocks := map[string]block{
		"H1": {kind: heading, level: 1}, "H2": {kind: heading, level: 2}, "H3": {kind: heading, level: 3},
		"H4": {kind: heading, level: 4}, "H5": {kind: heading, level: 5},
		"blank1": {kind: blank, blanks: 1}, "blank2": {kind: blank, blanks: 2}, "blank3": {kind: blank, blanks: 3},
		"item": {kind: listItem}, "para": {kind: paragraph},
	}
	names := []string{"H1", "H2", "H3", "H4", "H5", "blank1", "blank2", "blank3", "item", "para"}
	want := map[int][]string{
		199:  nil,
		200:  {"H1", "H2"},
		300:  {"H1", "H2", "H3"},
		400:  {"H1", "H2", "H3", "H4", "blank3"},
		500:  {"H1", "H2", "H3", "H4", "blank2", "blank3"},
		600:  {"H1", "H2", "H3", "H4", "blank2", "blank3", "item"},
		800:  {"H1", "H2", "H3", "H4", "blank1", "blank2", "blank3", "item"},
		5000: {"H1", "H2", "H3", "H4", "blank1", "blank2", "blank3", "item"},
	}
	for n, w := range want {
		var got []string
		for _, name := range names {
			b := blocks[name]
			if endsBefore(rules, n, &b) {
				got = append(got, name)
			}
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("at %d tokens, stopping blocks (-want +got):\n%s", n, diff)
		}
	}
}

func TestConfigDefaults(t *testing.T) {
	got := Config{}.withDefaults()
	want := Config{MinTokens: 200, H3Tokens: 300, H4Tokens: 400, TwoBlankTokens: 500, ListItemTokens: 600,
		BlankTokens: 800, DropTokens: 10, MaxTokens: 1200}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if got := (Config{MinTokens: 50, MaxTokens: 3}).withDefaults(); got.MinTokens != 50 || got.MaxTokens != 16 {
		t.Errorf("explicit values: got %+v", got)
	}
}

func TestSmallPage(t *testing.T) {
	tok := newTok(t)
	tests := []struct {
		name, page string
		want       []string
	}{
		{"blank", " \n\n\t\n", nil},
		{"tiny page is kept", "# Hi\n", []string{"# Hi"}},
		{"headings do not split a small page", "\n\n# A\ntext\n\n\n\n## B\n- one\n- two\n",
			[]string{"# A\ntext\n\n\n\n## B\n- one\n- two"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Split(tok, tt.page, Config{})
			if diff := cmp.Diff(tt.want, texts(got)); diff != "" {
				t.Errorf("chunks (-want +got):\n%s", diff)
			}
			for _, c := range got {
				if c.Tokens != tok.Count(c.Text) {
					t.Errorf("Tokens = %d, want %d", c.Tokens, tok.Count(c.Text))
				}
			}
		})
	}
}

func TestDropRule(t *testing.T) {
	tok := newTok(t)
	head := line(t, tok, 250)
	page := head + "## Tiny\nok\n"
	if diff := cmp.Diff([]string{trimEdges(head)}, texts(Split(tok, page, Config{}))); diff != "" {
		t.Errorf("default drops the tiny tail (-want +got):\n%s", diff)
	}
	want := []string{trimEdges(head), "## Tiny\nok"}
	if diff := cmp.Diff(want, texts(Split(tok, page, Config{DropTokens: -1}))); diff != "" {
		t.Errorf("DropTokens -1 keeps it (-want +got):\n%s", diff)
	}
	// An 11-token tail is kept by default.
	tail := "## Tiny" + strings.Repeat(" more", 8) + "\n" // "##", " Tiny", 8 x " more" = 10, +1 when it ends the text
	got := Split(tok, head+tail+"end", Config{})
	if len(got) != 2 || got[1].Tokens <= 10 {
		t.Errorf("11+ token tail: got %+v", got)
	}
}

func TestFencedCodeHeadings(t *testing.T) {
	blocks := parse("text\n```\n# not a heading\n- not an item\n```\n## real\n")
	var kinds []kind
	for _, b := range blocks {
		kinds = append(kinds, b.kind)
	}
	if diff := cmp.Diff([]kind{paragraph, paragraph, heading}, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
}

func TestParse(t *testing.T) {
	src := "# T\nintro\nmore intro\n\n\n* a\n  cont\n- b\n#nohash\n####### seven\n\n"
	type got struct {
		Text   string
		Kind   kind
		Level  int
		Blanks int
	}
	want := []got{
		{"# T\n", heading, 1, 0},
		{"intro\nmore intro\n", paragraph, 0, 0},
		{"\n\n", blank, 0, 2},
		{"* a\n  cont\n", listItem, 0, 0},
		{"- b\n#nohash\n####### seven\n", listItem, 0, 0},
		{"\n", blank, 0, 1},
	}
	var have []got
	for _, b := range parse(src) {
		have = append(have, got{src[b.start:b.end], b.kind, b.level, b.blanks})
	}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("blocks (-want +got):\n%s", diff)
	}
}

// TestHardMax covers pathological blocks, which the seed did not bound: one giant paragraph of sentences, a
// giant table without blank lines, and a single word thousands of tokens long.
func TestHardMax(t *testing.T) {
	tok := newTok(t)
	var table strings.Builder
	for i := range 800 {
		table.WriteString("| row " + strings.Repeat("x", i%7) + " | value " + string(rune('a'+i%26)) + " |\n")
	}
	tests := []struct {
		name, page string
		max        int
		lineCuts   bool
	}{
		{"paragraph", strings.Repeat("This sentence is about the library opening hours. ", 800), 0, false},
		{"table", table.String(), 0, true},
		{"word", strings.Repeat("7", 30000), 0, false},
		{"cjk word", strings.Repeat("東京大学", 3000), 300, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			max := tt.max
			if max == 0 {
				max = 1200
			}
			got := Split(tok, tt.page, Config{MaxTokens: tt.max})
			if len(got) < 2 {
				t.Fatalf("got %d chunks, want several", len(got))
			}
			for i, c := range got {
				if c.Tokens > max || c.Tokens != tok.Count(c.Text) {
					t.Errorf("chunk %d: Tokens %d, counted %d, max %d", i, c.Tokens, tok.Count(c.Text), max)
				}
				if tt.lineCuts && (!strings.HasPrefix(c.Text, "| row") || !strings.HasSuffix(c.Text, " |")) {
					t.Errorf("chunk %d not cut at a line boundary: %.40q...%.40q", i, c.Text, c.Text[len(c.Text)-40:])
				}
			}
			if diff := cmp.Diff(nonSpace(tt.page), nonSpace(strings.Join(texts(got), ""))); diff != "" {
				t.Errorf("content not preserved (-want +got):\n%.400s", diff)
			}
		})
	}
}

func nonSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}
