// Package boilerplate finds the template text of a site that the cleaner cannot tell from content: blocks (a
// paragraph, a list or a table: text between blank lines) that open or close most of the site's pages, such as a
// copyright and trademark footer in a plain <div>, or a breadcrumb trail without a navigation role. The cleaner
// removes chrome it can name (elements, roles, classes); a template written with layout markup only is found
// here by what it is, the same text at the edge of page after page, in the way template detection reads a site
// rather than a page (Bar-Yossef and Rajagopalan, "Template detection via data mining and its applications",
// WWW 2002). Ingest leaves these blocks out of the chunks, where they would stand in every page's first or last
// passage.
package boilerplate

import (
	"crypto/sha256"
	"encoding/hex"
	"hash/fnv"
	"math"
	"slices"
	"strings"

	"github.com/ragproxy/ragproxy/markdown"
)

// Config sets when a block is boilerplate. The zero value selects every default.
type Config struct {
	// MinPages is the fewest pages a site needs for any block to be boilerplate: on fewer, a shared block may be
	// a coincidence. Default 10.
	MinPages int
	// Share is the least share of the site's pages a block must open or close. Default 0.5.
	Share float64
	// Edge is how many blocks at each end of a page are read. Default 3.
	Edge int
}

func (c Config) withDefaults() Config {
	if c.MinPages <= 0 {
		c.MinPages = 10
	}
	if c.Share <= 0 {
		c.Share = 0.5
	}
	if c.Edge <= 0 {
		c.Edge = 3
	}
	return c
}

// Set is a site's boilerplate blocks. The zero Set (and a nil *Set) holds none.
type Set struct {
	blocks map[uint64]bool
	key    string
}

// Edges returns what Build counts of a page's markdown: the identities of its Edge first and last blocks. A
// heading is never boilerplate (it names what follows) and is left out.
func Edges(md string, cfg Config) []uint64 {
	cfg = cfg.withDefaults()
	spans := blocks(md)
	var out []uint64
	for j, sp := range spans {
		if j >= cfg.Edge && j < len(spans)-cfg.Edge {
			continue
		}
		text := md[sp.start:sp.end]
		if markdown.HeadingLevel(strings.TrimSpace(firstLine(text))) > 0 {
			continue
		}
		if h := hash(text); !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// Build returns the blocks that are among the edge blocks (Edges) of at least Share of the pages, edges[i]
// being page i's.
func Build(edges [][]uint64, cfg Config) *Set {
	cfg = cfg.withDefaults()
	s := &Set{}
	if len(edges) < cfg.MinPages {
		return s
	}
	counts := map[uint64]int{}
	for _, page := range edges {
		for _, h := range page {
			counts[h]++
		}
	}
	need := int(math.Ceil(cfg.Share * float64(len(edges))))
	var keys []uint64
	for h, c := range counts {
		if c >= need {
			keys = append(keys, h)
		}
	}
	if len(keys) == 0 {
		return s
	}
	slices.Sort(keys)
	s.blocks = make(map[uint64]bool, len(keys))
	sum := sha256.New()
	for _, k := range keys {
		s.blocks[k] = true
		var b [8]byte
		for i := range b {
			b[i] = byte(k >> (8 * i))
		}
		sum.Write(b[:])
	}
	s.key = hex.EncodeToString(sum.Sum(nil)[:8])
	return s
}

// Len is the number of boilerplate blocks.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return len(s.blocks)
}

// Key identifies the set: equal sets have equal keys; "" for an empty set.
func (s *Set) Key() string {
	if s == nil {
		return ""
	}
	return s.key
}

// Strip returns md without the boilerplate blocks that open or close it: the run of them before its first
// other block and the run after its last. Boilerplate between content blocks stays (it is no longer at an
// edge), and a page that is boilerplate alone is returned as it is.
func (s *Set) Strip(md string) string {
	if s.Len() == 0 {
		return md
	}
	spans := blocks(md)
	lo, hi := 0, len(spans)
	for lo < hi && s.blocks[hash(md[spans[lo].start:spans[lo].end])] {
		lo++
	}
	for hi > lo && s.blocks[hash(md[spans[hi-1].start:spans[hi-1].end])] {
		hi--
	}
	if lo == hi || lo == 0 && hi == len(spans) {
		return md
	}
	return md[spans[lo].start:spans[hi-1].end] + "\n"
}

// span is a block's lines in a markdown string, without the blank lines around it or its last line's end.
type span struct{ start, end int }

// blocks splits md at blank lines outside fenced code.
func blocks(md string) []span {
	var out []span
	start, end := -1, -1 // the current block's first byte and the end of its last non-blank line
	fenced := false
	off := 0
	for line := range strings.Lines(md) {
		t := strings.TrimSpace(line)
		if markdown.FenceLine(t) {
			fenced = !fenced
		}
		switch {
		case t == "" && !fenced:
			if start >= 0 {
				out = append(out, span{start, end})
				start = -1
			}
		default:
			if start < 0 {
				start = off
			}
			end = off + len(strings.TrimRight(line, " \t\r\n"))
		}
		off += len(line)
	}
	if start >= 0 {
		out = append(out, span{start, end})
	}
	return out
}

// hash identifies a block by its text, indentation aside.
func hash(text string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(strings.TrimSpace(text)))
	return h.Sum64()
}

func firstLine(text string) string {
	line, _, _ := strings.Cut(text, "\n")
	return line
}
