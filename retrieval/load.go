package retrieval

import (
	"fmt"
	"strings"

	"github.com/ragproxy/ragproxy/embed"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/tokenizer"
)

// Open loads the current index under dir and prepares a Retriever. An index built with the local embedder
// brings its own (its IDF table is in the index); one built with an upstream embedding model needs remote, the
// same model.
func Open(dir string, remote embed.Embedder, tok *tokenizer.Tokenizer, cfg Config) (*Retriever, error) {
	ix, err := index.Load(dir)
	if err != nil {
		return nil, err
	}
	emb, err := EmbedderFor(ix, remote)
	if err != nil {
		return nil, err
	}
	return prepare(ix, emb, tok, cfg, true)
}

// OpenGently is Open on one core, for a server that loads a new version while it answers from the old one: the
// index's files are read and the search structures built one after another, leaving the other cores to the
// requests in flight (on the Berkeley guide a reload under streaming load raised the streams' p99 from 0.25 s to
// 1.0 s built side by side, to 0.33 s built one by one; see BenchmarkReloadLatency).
func OpenGently(dir string, remote embed.Embedder, tok *tokenizer.Tokenizer, cfg Config) (*Retriever, error) {
	ix, err := index.LoadGently(dir)
	if err != nil {
		return nil, err
	}
	emb, err := EmbedderFor(ix, remote)
	if err != nil {
		return nil, err
	}
	return prepare(ix, emb, tok, cfg, false)
}

// prepare builds the retriever of an index loaded from disk, then leaves the index's texts there: the search
// structures are built, and a request reads only the few dozen passages it puts in its context. Close the
// index (Retriever.Index().Close) when the retriever is no longer used.
func prepare(ix *index.Index, emb embed.Embedder, tok *tokenizer.Tokenizer, cfg Config, parallel bool) (*Retriever, error) {
	r, err := build(ix, emb, tok, cfg, parallel)
	if err != nil {
		return nil, err
	}
	if err := ix.TextsToDisk(); err != nil {
		return nil, err
	}
	return r, nil
}

// EmbedderFor returns the embedder that computes query vectors comparable with ix's.
func EmbedderFor(ix *index.Index, remote embed.Embedder) (embed.Embedder, error) {
	if strings.HasPrefix(ix.Manifest.Embedder, "local-") {
		l := embed.NewLocal(embed.LocalConfig{})
		if err := l.UnmarshalBinary(ix.EmbedderState); err != nil {
			return nil, fmt.Errorf("retrieval: local embedder state: %w", err)
		}
		return l, nil
	}
	if remote == nil {
		return nil, fmt.Errorf("retrieval: %w: the index was embedded with %s; configure that embedding model",
			ErrEmbedderMismatch, ix.Manifest.Embedder)
	}
	return remote, nil
}
