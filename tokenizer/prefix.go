package tokenizer

import (
	"sort"
	"unicode"
	"unicode/utf8"
)

// Pieces is a text pre-tokenised once, so that the token counts of many of its substrings (the blocks and
// chunks of a page) cost a lookup each instead of a pass over each. Build it with Tokenizer.Pieces; it is not
// safe for concurrent use.
//
// Count(a, b) equals Tokenizer.Count(s[a:b]). It rests on a property of the pre-tokenisation patterns of
// o200k_base and cl100k_base: neither has look-behind, and their only look-ahead, (?!\S), decides the end
// of a whitespace run. So the
// pieces of s[a:b], when a is a piece boundary of s, are the pieces of s up to the last boundary q at or before
// the end of s[a:b] without its trailing whitespace: no piece before q looked past that end, where the two
// strings first differ. The rest, s[q:b], is usually a piece or two and is counted afresh.
// FuzzPiecesCount checks it against Count.
type Pieces struct {
	t    *Tokenizer
	s    string
	ends []int32 // end of each piece of s
	cum  []int32 // tokens of s up to ends[i]
	ok   bool    // s is valid UTF-8 and short enough for int32 offsets; otherwise Count counts afresh
	at   int     // where the last search ended: callers count spans in order
}

// search returns the number of piece ends at or before x, starting from where the last search ended.
func (p *Pieces) search(x int) int {
	i := min(p.at, len(p.ends))
	if i > 0 && int(p.ends[i-1]) > x {
		i = sort.Search(i, func(k int) bool { return int(p.ends[k]) > x })
	} else {
		for i < len(p.ends) && int(p.ends[i]) <= x {
			if i+64 < len(p.ends) && int(p.ends[i+64]) <= x {
				i += 64
				continue
			}
			i++
		}
	}
	p.at = i
	return i
}

// Pieces pre-tokenises s into p, reusing p's buffers, and returns p (a new one when p is nil).
func (t *Tokenizer) Pieces(s string, p *Pieces) *Pieces {
	if p == nil {
		p = &Pieces{}
	}
	p.t, p.s, p.ends, p.cum, p.at = t, s, p.ends[:0], p.cum[:0], 0
	if n := len(s)/3 + 16; cap(p.ends) < n {
		p.ends, p.cum = make([]int32, 0, n), make([]int32, 0, n)
	}
	p.ok = len(s) < 1<<31-1 && utf8.ValidString(s)
	if !p.ok {
		return p
	}
	var scratch [linearMergeMax]int
	n := 0
	for i := 0; i < len(s); {
		j := t.enc.next(s, i)
		piece := s[i:j]
		if len(piece) <= hotMaxLen {
			k0, k1 := hotKey(piece)
			if c, _, ok := t.hot.get(k0, k1, len(piece)); ok {
				n += c
			} else {
				toks := t.pieceTokens(scratch[:0], piece)
				n += len(toks)
				t.hot.put(k0, k1, len(piece), len(toks), toks[0])
			}
		} else {
			n += len(t.pieceTokens(scratch[:0], piece))
		}
		p.ends = append(p.ends, int32(j))
		p.cum = append(p.cum, int32(n))
		i = j
	}
	return p
}

// Count returns the number of tokens of s[a:b], exactly as Tokenizer.Count(s[a:b]).
func (p *Pieces) Count(a, b int) int {
	if a >= b {
		return 0
	}
	if !p.ok {
		return p.t.Count(p.s[a:b])
	}
	// ka: index of the boundary a (-1 for the start of s).
	ka := -1
	if a > 0 {
		ka = p.search(a) - 1
		if ka < 0 || int(p.ends[ka]) != a {
			return p.t.Count(p.s[a:b])
		}
	}
	end := b
	for end > a {
		c := p.s[end-1]
		if c < utf8.RuneSelf {
			if c != ' ' && c != '\n' && c != '\t' && c != '\r' && c != '\v' && c != '\f' {
				break
			}
			end--
			continue
		}
		r, w := utf8.DecodeLastRuneInString(p.s[a:end])
		if !unicode.IsSpace(r) {
			break
		}
		end -= w
	}
	// kq: the last boundary at or before end.
	kq := p.search(end) - 1
	if kq <= ka {
		return p.t.Count(p.s[a:b])
	}
	n := int(p.cum[kq])
	if ka >= 0 {
		n -= int(p.cum[ka])
	}
	return n + p.t.Count(p.s[p.ends[kq]:b])
}
