package tokenizer

import (
	"math/bits"
	"sync/atomic"
)

// hotCache is a small direct-mapped cache from short pieces (at most 16 bytes, which is nearly every piece
// of prose) to their token count and, for single-token pieces, the token. Its hot entries stay in the CPU
// caches, whereas each lookup in the 200k-entry rank map misses them two or three times; since a few
// thousand distinct pieces make up almost all of a text, most pieces are answered here. (On the Berkeley
// corpus 32k entries count about 30% faster than 8k.)
//
// Keys are stored inline as two words, so a hit reads one 32-byte entry. Each entry is a seqlock over
// atomic words: a reader retries nothing, it treats a torn read as a miss; a writer that finds the entry
// busy skips the write. The cache is therefore safe for concurrent use without locks on the read path.
type hotCache struct {
	entries [hotEntries]hotEntry
}

const (
	hotBits    = 15
	hotEntries = 1 << hotBits // 32,768 entries of 32 bytes: 1 MB per Tokenizer
	hotMaxLen  = 16
)

type hotEntry struct {
	seq atomic.Uint64 // odd while a write is in progress
	k0  atomic.Uint64
	k1  atomic.Uint64
	val atomic.Uint64 // len | count<<8 | token<<32; len 0 marks an empty entry
}

// hotKey packs a piece of 1 to 16 bytes into two words that, together with its length, identify it.
func hotKey(p string) (k0, k1 uint64) {
	n := len(p)
	switch {
	case n >= 8:
		return le64(p, 0), le64(p, n-8)
	case n >= 4:
		return le32(p, 0) | le32(p, n-4)<<32, 0
	default:
		return uint64(p[0]) | uint64(p[n/2])<<8 | uint64(p[n-1])<<16, 0
	}
}

func hotIndex(k0, k1 uint64, n int) uint64 {
	hi, lo := bits.Mul64(k0^0x9e3779b97f4a7c15, k1^uint64(n)^0xd6e8feb86659fd93)
	return (hi ^ lo) >> (64 - hotBits)
}

// get returns the token count of the piece with key (k0, k1) and length n, and its token when the count is
// 1.
func (c *hotCache) get(k0, k1 uint64, n int) (count, token int, ok bool) {
	e := &c.entries[hotIndex(k0, k1, n)]
	s := e.seq.Load()
	if s&1 != 0 {
		return 0, 0, false
	}
	v := e.val.Load()
	if int(v&0xff) != n || e.k0.Load() != k0 || e.k1.Load() != k1 || e.seq.Load() != s {
		return 0, 0, false
	}
	return int(v >> 8 & 0xffffff), int(v >> 32), true
}

// put records the count and (for single-token pieces) the token of a piece. Counts too large to pack are
// not cached.
func (c *hotCache) put(k0, k1 uint64, n, count, token int) {
	if count >= 1<<24 || token < 0 || token >= 1<<32 {
		return
	}
	e := &c.entries[hotIndex(k0, k1, n)]
	s := e.seq.Load()
	if s&1 != 0 || !e.seq.CompareAndSwap(s, s+1) {
		return // another writer holds the entry
	}
	e.k0.Store(k0)
	e.k1.Store(k1)
	e.val.Store(uint64(n) | uint64(count)<<8 | uint64(token)<<32)
	e.seq.Store(s + 2)
}

func le64(s string, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

func le32(s string, i int) uint64 {
	_ = s[i+3]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24
}
