package tokenizer

import (
	"hash/maphash"
	"sync"
)

// The piece cache remembers the tokens of pieces that are not themselves tokens and so need byte-pair
// merging. Pieces repeat heavily in real text (inflected words, names, markdown punctuation runs), so a
// lookup replaces a dozen rank lookups. It is sharded to keep lock contention low and bounded: a shard
// that reaches its cap is emptied and refills with the pieces still in use.
const (
	cacheShards     = 64
	cacheShardCap   = 2048 // entries per shard: at most 131,072 pieces in all
	cacheMaxPiece   = 64   // longer pieces are rare repeats and are not cached
	cacheMaxEntries = cacheShards * cacheShardCap
)

type pieceCache struct {
	seed   maphash.Seed
	shards [cacheShards]cacheShard
}

type cacheShard struct {
	mu sync.RWMutex
	m  map[string][]int
	_  [32]byte // keep shards on separate cache lines
}

func newPieceCache() *pieceCache {
	return &pieceCache{seed: maphash.MakeSeed()}
}

func (c *pieceCache) shard(piece string) *cacheShard {
	return &c.shards[maphash.String(c.seed, piece)%cacheShards]
}

// get returns the cached tokens of piece; callers must not modify them.
func (c *pieceCache) get(piece string) ([]int, bool) {
	s := c.shard(piece)
	s.mu.RLock()
	toks, ok := s.m[piece]
	s.mu.RUnlock()
	return toks, ok
}

// put caches a copy of tokens for a copy of piece, so the cache never pins the caller's text.
func (c *pieceCache) put(piece string, tokens []int) {
	if len(piece) > cacheMaxPiece {
		return
	}
	key := string([]byte(piece))
	val := append([]int(nil), tokens...)
	s := c.shard(piece)
	s.mu.Lock()
	if s.m == nil || len(s.m) >= cacheShardCap {
		s.m = make(map[string][]int, 64)
	}
	s.m[key] = val
	s.mu.Unlock()
}

// len returns the number of cached pieces.
func (c *pieceCache) len() int {
	n := 0
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		n += len(s.m)
		s.mu.RUnlock()
	}
	return n
}
