package tokenizer

import "math"

// linearMergeMax is the longest piece merged by rescanning all pairs after each merge, which is quadratic
// but allocation-free and fastest for the short pieces of ordinary text. Longer pieces (runs of
// punctuation, spaces or letters without spaces) go through a heap.
const linearMergeMax = 64

// noRank marks a pair of parts whose concatenation is not a token.
const noRank = math.MaxInt32

// bytePairEncode appends the tokens of piece to dst: starting from single bytes it repeatedly merges the
// adjacent pair whose concatenation has the lowest rank, the leftmost on ties, as tiktoken's
// byte_pair_merge does. piece is not itself a token.
func (e *encoder) bytePairEncode(dst []int, piece string) []int {
	if len(piece) == 1 {
		return append(dst, e.byteRank[piece[0]])
	}
	if len(piece) <= linearMergeMax {
		return e.mergeLinear(dst, piece)
	}
	return e.mergeHeap(dst, piece)
}

// rank returns the rank of b, or noRank.
func (e *encoder) rank(b string) int32 {
	if r, ok := e.ranks[b]; ok {
		return int32(r)
	}
	return noRank
}

func (e *encoder) mergeLinear(dst []int, piece string) []int {
	type part struct {
		start int32
		rank  int32 // rank of this part merged with the next one
	}
	var buf [linearMergeMax + 1]part
	parts := buf[:len(piece)+1]
	for i := range parts {
		parts[i] = part{int32(i), noRank}
	}
	for i := 0; i+2 < len(parts); i++ {
		parts[i].rank = e.rank(piece[i : i+2])
	}
	// pairRank is the rank of parts[i] merged with parts[i+1], once parts[i+1] has been removed.
	pairRank := func(i int) int32 {
		if i+3 < len(parts) {
			return e.rank(piece[parts[i].start:parts[i+3].start])
		}
		return noRank
	}
	for len(parts) > 1 {
		minRank, minIdx := int32(noRank), -1
		for i := 0; i < len(parts)-1; i++ {
			if parts[i].rank < minRank {
				minRank, minIdx = parts[i].rank, i
			}
		}
		if minIdx < 0 {
			break
		}
		i := minIdx
		parts[i].rank = pairRank(i)
		if i > 0 {
			parts[i-1].rank = pairRank(i - 1)
		}
		parts = append(parts[:i+1], parts[i+2:]...)
	}
	for i := 0; i+1 < len(parts); i++ {
		dst = append(dst, e.ranks[piece[parts[i].start:parts[i+1].start]])
	}
	return dst
}

// mergeHeap performs the same merges as mergeLinear in O(n log n): parts form a linked list and candidate
// pairs sit in a min-heap ordered by (rank, position), so the leftmost lowest pair comes out first.
// Entries made stale by a merge are skipped when popped: a part's rank only changes when its span grows,
// and a longer span is a different token with a different rank.
func (e *encoder) mergeHeap(dst []int, piece string) []int {
	n := len(piece)
	next := make([]int32, n) // next[i]: start of the part after the part starting at i (n at the end)
	prev := make([]int32, n)
	rank := make([]int32, n) // rank of the part at i merged with its successor
	h := make(pairHeap, 0, n)
	for i := range n {
		next[i], prev[i], rank[i] = int32(i+1), int32(i-1), noRank
	}
	// end returns the end of the part after the part starting at i, or -1 if there is none.
	end := func(i int32) int32 {
		if j := next[i]; int(j) < n {
			return next[j]
		}
		return -1
	}
	for i := int32(0); int(i)+1 < n; i++ {
		if rank[i] = e.rank(piece[i : i+2]); rank[i] != noRank {
			h = append(h, pair{rank[i], i})
		}
	}
	h.init()
	alive := func(i int32) bool { return i == 0 || prev[i] >= 0 } // removed parts get prev -1
	for len(h) > 0 {
		p := h.pop()
		i := p.pos
		if rank[i] != p.rank || !alive(i) {
			continue
		}
		// Merge part i with its successor j.
		j := next[i]
		next[i] = next[j]
		if int(next[j]) < n {
			prev[next[j]] = i
		}
		next[j], prev[j] = -1, -1
		rank[i] = noRank
		if k := end(i); k >= 0 {
			if rank[i] = e.rank(piece[i:k]); rank[i] != noRank {
				h.push(pair{rank[i], i})
			}
		}
		if i > 0 {
			q := prev[i]
			rank[q] = e.rank(piece[q:next[i]])
			if rank[q] != noRank {
				h.push(pair{rank[q], q})
			}
		}
	}
	for i := int32(0); int(i) < n; i = next[i] {
		dst = append(dst, e.ranks[piece[i:next[i]]])
	}
	return dst
}

type pair struct {
	rank int32
	pos  int32
}

func (a pair) less(b pair) bool { return a.rank < b.rank || a.rank == b.rank && a.pos < b.pos }

// pairHeap is a binary min-heap of pairs.
type pairHeap []pair

func (h pairHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *pairHeap) push(p pair) {
	*h = append(*h, p)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if !s[i].less(s[parent]) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

func (h *pairHeap) pop() pair {
	s := *h
	top := s[0]
	s[0] = s[len(s)-1]
	*h = s[:len(s)-1]
	h.down(0)
	return top
}

func (h pairHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].less(h[l]) {
			m = r
		}
		if !h[m].less(h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
