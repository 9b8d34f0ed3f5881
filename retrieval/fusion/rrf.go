// Package fusion merges ranked result lists. Its functions are pure and safe for concurrent use.
package fusion

import "sort"

// Scored is one fused item with its fused score.
type Scored struct {
	ID    int
	Score float64
}

// Common choices for RRF's k and rank base.
const (
	// K60 is the smoothing constant of Cormack, Clarke and Buettcher, "Reciprocal rank fusion outperforms
	// Condorcet and individual rank learning methods" (SIGIR 2009), used with ranks from 1.
	K60 = 60
)

// RRF fuses ranked lists (best first) by reciprocal rank fusion: an item's score is the sum over the lists that
// contain it of 1/(k + rank), where rank counts from rankBase (1 in the SIGIR paper; the FHNW prototype used
// rankBase 0 and k = the number of lists). Within a list only an item's first occurrence counts. The result is
// sorted by score, highest first; ties keep the order of first appearance, reading the lists in order and each
// list from its top, which makes the result deterministic.
func RRF(lists [][]int, k float64, rankBase int) []Scored {
	return WeightedRRF(lists, nil, k, rankBase)
}

// WeightedRRF is RRF with each list's contributions scaled by its weight (weights[i] for lists[i]; a nil weights
// slice weighs every list 1), for fusing signals of unequal reliability.
func WeightedRRF(lists [][]int, weights []float64, k float64, rankBase int) []Scored {
	pos := make(map[int]int) // item -> index in out
	var out []Scored
	for li, list := range lists {
		w := 1.0
		if weights != nil {
			w = weights[li]
		}
		seen := make(map[int]struct{}, len(list))
		for r, id := range list {
			if _, dup := seen[id]; dup {
				continue
			}
			seen[id] = struct{}{}
			s := w / (k + float64(r+rankBase))
			if i, ok := pos[id]; ok {
				out[i].Score += s
				continue
			}
			pos[id] = len(out)
			out = append(out, Scored{ID: id, Score: s})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}

// IDs returns the items of s in order, at most n of them (all when n < 0).
func IDs(s []Scored, n int) []int {
	if n < 0 || n > len(s) {
		n = len(s)
	}
	out := make([]int, n)
	for i := range out {
		out[i] = s[i].ID
	}
	return out
}
