// Package chunk splits a page's cleaned markdown into retrieval chunks with the hierarchical token thresholds
// of the FHNW prototype (Table 1, "Chunk processing thresholds in detail"), counting o200k_base tokens.
//
// The markdown is parsed line by line into blocks (headings, blank-line runs, "*"/"-" list items,
// paragraphs). Blocks are added to the current chunk until it holds at least MinTokens tokens; from then on
// the chunk may end before a block, and the kinds of block that end it widen as the chunk grows:
//
//	tokens >= 200  heading H1-H2
//	tokens >= 300  heading H1-H3
//	tokens >= 400  heading H1-H4, or 3 blank lines
//	tokens >= 500  heading H1-H4, or 2 blank lines
//	tokens >= 600  heading H1-H4, or 2 blank lines, or a list item
//	tokens >= 800  heading H1-H4, or any blank line, or a list item
//
// A page under MinTokens tokens is one chunk, and chunks of DropTokens tokens or fewer are dropped.
//
// Beyond the seed, which had no upper bound, no chunk exceeds MaxTokens (default 1200): a block too large to
// fit (a giant paragraph or table without blank lines) is cut at line boundaries, then at sentence ends, then
// between words, and as a last resort between tokens. Invalid UTF-8 is replaced with U+FFFD first.
//
// Split is safe for concurrent use; it keeps no state between calls.
package chunk

import (
	"strings"
	"unicode"

	"github.com/ragproxy/ragproxy/tokenizer"
)

// Config holds the chunking thresholds, in o200k_base tokens. The zero value gives the FHNW prototype's defaults.
type Config struct {
	// MinTokens is the size a chunk grows to before it may end (before an H1-H2 heading), and the size under
	// which a whole page is one chunk. Default 200.
	MinTokens int
	// H3Tokens is the size from which an H3 heading may also end a chunk. Default 300.
	H3Tokens int
	// H4Tokens is the size from which an H4 heading or a run of three blank lines may also end a chunk.
	// Default 400.
	H4Tokens int
	// TwoBlankTokens is the size from which a run of two blank lines may also end a chunk. Default 500.
	TwoBlankTokens int
	// ListItemTokens is the size from which a list item may also end a chunk. Default 600.
	ListItemTokens int
	// BlankTokens is the size from which any blank line may also end a chunk. Default 800.
	BlankTokens int
	// DropTokens drops chunks of this many tokens or fewer (a page that is one chunk is kept). Default 10;
	// a negative value keeps every chunk.
	DropTokens int
	// MaxTokens is the hard upper bound of a chunk, which the seed did not have. Default 1200; values below
	// 16 are raised to 16 so that a chunk can always hold a character.
	MaxTokens int
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.MinTokens, 200)
	def(&c.H3Tokens, 300)
	def(&c.H4Tokens, 400)
	def(&c.TwoBlankTokens, 500)
	def(&c.ListItemTokens, 600)
	def(&c.BlankTokens, 800)
	def(&c.DropTokens, 10)
	def(&c.MaxTokens, 1200)
	c.MaxTokens = max(c.MaxTokens, 16)
	return c
}

// rule is one row of the FHNW prototype's Table 1: once a chunk holds at least minTokens tokens, it ends before any
// block for which ends is true.
type rule struct {
	minTokens int
	ends      func(b *block) bool
}

func headingUpTo(level int) func(b *block) bool {
	return func(b *block) bool { return b.kind == heading && b.level <= level }
}

func anyOf(preds ...func(b *block) bool) func(b *block) bool {
	return func(b *block) bool {
		for _, p := range preds {
			if p(b) {
				return true
			}
		}
		return false
	}
}

func blankRun(n int) func(b *block) bool {
	return func(b *block) bool { return b.kind == blank && b.blanks >= n }
}

func isItem(b *block) bool { return b.kind == listItem }

// rules encodes Table 1 of the FHNW prototype (threshold; stopping heading levels; stopping newlines; stopping
// characters): 200: 1-2; 300: 1-3; 400: 1-4, 3 consecutive; 500: 1-4, 2 consecutive; 600: 1-4,
// 2 consecutive, asterisk; 800: 1-4, 1 consecutive, asterisk.
func (c Config) rules() []rule {
	return []rule{
		{c.MinTokens, headingUpTo(2)},
		{c.H3Tokens, headingUpTo(3)},
		{c.H4Tokens, anyOf(headingUpTo(4), blankRun(3))},
		{c.TwoBlankTokens, anyOf(headingUpTo(4), blankRun(2))},
		{c.ListItemTokens, anyOf(headingUpTo(4), blankRun(2), isItem)},
		{c.BlankTokens, anyOf(headingUpTo(4), blankRun(1), isItem)},
	}
}

// endsBefore reports whether a chunk of n tokens ends before block b: some row of the table whose threshold
// n has reached stops at b. The rows are cumulative, so this is the row for n's band.
func endsBefore(rules []rule, n int, b *block) bool {
	for i := range rules {
		if n >= rules[i].minTokens && rules[i].ends(b) {
			return true
		}
	}
	return false
}

// Chunk is a contiguous passage of a page.
type Chunk struct {
	// Text is an exact substring of the (UTF-8 sanitised) page, without leading blank lines and trailing
	// whitespace.
	Text string
	// Tokens is the o200k_base count of Text, counted on the final text (the chunker sums per-block counts
	// while growing a chunk, which can differ by a token or two at block joins).
	Tokens int
}

// Split cuts markdown into chunks following cfg (see the package doc). It returns nil for a blank page.
func Split(tok *tokenizer.Tokenizer, markdown string, cfg Config) []Chunk {
	cfg = cfg.withDefaults()
	c := &chunker{tok: tok, src: strings.ToValidUTF8(markdown, "\uFFFD"), cfg: cfg, rules: cfg.rules()}
	// The page is pre-tokenised once; every block and chunk count is then a difference of running counts
	// (plus a piece or two at its end) instead of another pass over its text.
	c.pieces = tok.Pieces(c.src, nil)
	return c.split()
}

type chunker struct {
	tok    *tokenizer.Tokenizer
	pieces *tokenizer.Pieces // of src
	src    string
	cfg    Config
	rules  []rule
	out    []Chunk
}

func (c *chunker) split() []Chunk {
	blocks := parse(c.src)
	total := 0
	for i := range blocks {
		b := &blocks[i]
		b.tokens = c.pieces.Count(b.start, b.end)
		if b.kind != blank {
			total += b.tokens // blank lines alone never make a page large
		}
	}
	if total < c.cfg.MinTokens {
		// The FHNW chatbot paper: a page of fewer than 200 tokens is returned as a single chunk.
		i, j := trimSpan(c.src)
		text := c.src[i:j]
		if text == "" {
			return nil
		}
		if n := c.pieces.Count(i, j); n < c.cfg.MinTokens && n <= c.cfg.MaxTokens {
			return []Chunk{{Text: text, Tokens: n}}
		}
	}

	var pieces []block
	for _, b := range blocks {
		if b.tokens > c.cfg.MaxTokens && b.kind != blank {
			pieces = append(pieces, c.explode(b, 0)...)
		} else {
			pieces = append(pieces, b)
		}
	}

	first, n := -1, 0
	for i := range pieces {
		b := &pieces[i]
		if first < 0 {
			if b.kind == blank {
				continue // a chunk never starts with blank lines
			}
			first, n = i, 0
		} else if endsBefore(c.rules, n, b) || n+b.tokens > c.cfg.MaxTokens {
			c.emit(pieces[first:i])
			if b.kind == blank {
				first = -1
				continue
			}
			first, n = i, 0
		}
		n += b.tokens
	}
	if first >= 0 {
		c.emit(pieces[first:])
	}

	kept := c.out[:0]
	for _, ch := range c.out {
		if ch.Tokens > c.cfg.DropTokens {
			kept = append(kept, ch)
		}
	}
	return kept
}

// emit appends the chunk made of run, counting its final text. When the joins push the count over
// MaxTokens, the run is halved (or, for a single block, cut by tokens) until every part fits.
func (c *chunker) emit(run []block) {
	i, j := trimSpan(c.src[run[0].start:run[len(run)-1].end])
	i, j = i+run[0].start, j+run[0].start
	text := c.src[i:j]
	if text == "" {
		return
	}
	n := c.pieces.Count(i, j)
	if n <= c.cfg.MaxTokens {
		c.out = append(c.out, Chunk{Text: text, Tokens: n})
		return
	}
	if len(run) > 1 {
		half, sum, mid := 0, 0, 1
		for _, b := range run {
			half += b.tokens
		}
		for i := 0; i < len(run)-1; i++ {
			if sum += run[i].tokens; 2*sum >= half {
				mid = i + 1
				break
			}
		}
		c.emit(run[:mid])
		c.emit(run[mid:])
		return
	}
	for text != "" {
		head := c.tok.Truncate(text, c.cfg.MaxTokens)
		if head == "" { // cannot happen with MaxTokens >= 16 and valid UTF-8; never loop forever
			return
		}
		if h := trimEdges(head); h != "" {
			c.out = append(c.out, Chunk{Text: h, Tokens: c.tok.Count(h)})
		}
		text = trimEdges(text[len(head):])
	}
}

// trimEdges removes leading blank lines and trailing whitespace, keeping the first line's indentation.
func trimEdges(s string) string {
	i, j := trimSpan(s)
	return s[i:j]
}

// trimSpan returns the bounds of trimEdges(s) in s.
func trimSpan(s string) (int, int) {
	j := len(strings.TrimRightFunc(s, unicode.IsSpace))
	i := 0
	for {
		k := strings.IndexByte(s[i:j], '\n')
		if k < 0 || strings.TrimSpace(s[i:i+k]) != "" {
			return i, j
		}
		i += k + 1
	}
}
