package embedding

import (
	"context"
	"fmt"
	"sync"
)

// Memo is an Embedder that remembers the vectors of the texts it embedded through another Embedder, for the life
// of one request: the queries a request retrieves with more than once (the question, searched with the heuristic
// rewrites and again with the model's) are embedded once, and Start embeds a text ahead of the retrieval that
// needs it, as soon as the text is known. It is safe for concurrent use.
type Memo struct {
	e  Embedder
	mu sync.Mutex
	m  map[string]*memoEntry
}

var _ Embedder = (*Memo)(nil)

// memoEntry is one text's vector, ready once done is closed; a failed embedding is forgotten, so that the next
// Embed asks again.
type memoEntry struct {
	done chan struct{}
	vec  []float32
	err  error
}

// NewMemo returns a Memo over e.
func NewMemo(e Embedder) *Memo { return &Memo{e: e, m: map[string]*memoEntry{}} }

// Name is the wrapped embedder's: the vectors are its.
func (m *Memo) Name() string { return m.e.Name() }

// Dimension is the wrapped embedder's.
func (m *Memo) Dimension() int { return m.e.Dimension() }

// Start embeds the texts not yet embedded or under way, in one request in the background, bounded by ctx; an
// Embed of them waits for it instead of asking again.
func (m *Memo) Start(ctx context.Context, texts ...string) {
	_, todo, fresh := m.claim(texts)
	if len(todo) == 0 {
		return
	}
	go m.fill(ctx, todo, fresh) // ends when the wrapped Embed returns, at the latest when ctx ends
}

// Embed returns the texts' vectors: those already embedded or under way are waited for, the rest are embedded
// in one request.
func (m *Memo) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	all, todo, fresh := m.claim(texts)
	if len(todo) > 0 {
		m.fill(ctx, todo, fresh)
	}
	out := make([][]float32, len(texts))
	for i, e := range all {
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if e.err != nil {
			return nil, e.err
		}
		out[i] = e.vec
	}
	return out, nil
}

// claim returns each text's entry, registering one for each text no entry holds yet: those texts and their new
// entries, which the caller fills, are todo and fresh.
func (m *Memo) claim(texts []string) (all []*memoEntry, todo []string, fresh []*memoEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	all = make([]*memoEntry, len(texts))
	for i, t := range texts {
		e, ok := m.m[t]
		if !ok {
			e = &memoEntry{done: make(chan struct{})}
			m.m[t] = e
			todo, fresh = append(todo, t), append(fresh, e)
		}
		all[i] = e
	}
	return all, todo, fresh
}

// fill embeds todo and completes their entries; on failure each entry carries the error to its waiters and is
// forgotten, so that a later Embed asks again.
func (m *Memo) fill(ctx context.Context, todo []string, entries []*memoEntry) {
	vecs, err := m.e.Embed(ctx, todo)
	if err == nil && len(vecs) != len(todo) {
		err = fmt.Errorf("embed: %d vectors for %d texts", len(vecs), len(todo))
	}
	m.mu.Lock()
	for i, e := range entries {
		if err != nil {
			e.err = err
			if m.m[todo[i]] == e {
				delete(m.m, todo[i])
			}
		} else {
			e.vec = vecs[i]
		}
		close(e.done)
	}
	m.mu.Unlock()
}
