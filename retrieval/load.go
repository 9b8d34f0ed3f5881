package retrieval

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval/lexical"
	"github.com/ragproxy/ragproxy/tokenizer"
)

// Open loads the current index under dir and prepares a Retriever. An index built with the local embedder
// brings its own (its IDF table is in the index); one built with an upstream embedding model needs remote, the
// same model.
//
// The index's texts stay on disk: the search structures come from the version's SearchFile, or, when it has
// none for this binary (an index written by an earlier release), are built from the texts read once. Close the
// index (Retriever.Index().Close) when the retriever is no longer used.
func Open(dir string, remote embedding.Embedder, tok *tokenizer.Tokenizer, cfg Config) (*Retriever, error) {
	return open(dir, remote, tok, cfg, false)
}

// OpenGently is Open on one core, for a server that loads a new version while it answers from the old one: the
// index's files are read and the search structures built one after another, leaving the other cores to the
// requests in flight (on the Berkeley guide a reload under streaming load raised the streams' p99 from 0.25 s to
// 1.0 s built side by side, to 0.33 s built one by one; see BenchmarkReloadLatency).
func OpenGently(dir string, remote embedding.Embedder, tok *tokenizer.Tokenizer, cfg Config) (*Retriever, error) {
	return open(dir, remote, tok, cfg, true)
}

func open(dir string, remote embedding.Embedder, tok *tokenizer.Tokenizer, cfg Config, gently bool) (*Retriever, error) {
	ix, err := index.LoadWith(dir, index.LoadOptions{Gently: gently, TextsOnDisk: true, MapVectors: true})
	if err != nil {
		return nil, err
	}
	r, err := prepare(ix, remote, tok, cfg, !gently)
	if err != nil {
		ix.Close()
		return nil, err
	}
	return r, nil
}

func prepare(ix *index.Index, remote embedding.Embedder, tok *tokenizer.Tokenizer, cfg Config, parallel bool) (*Retriever, error) {
	emb, err := EmbedderFor(ix, remote)
	if err != nil {
		return nil, err
	}
	if err := checkEmbedder(ix, emb); err != nil {
		return nil, err
	}
	var parts *searchParts
	preload(cfg, parallel, func() {
		if cfg.Analysis == (lexical.Analyzer{}) {
			if parts, err = readSearchFile(ix); !errors.Is(err, errStaleSearch) {
				return
			}
		}
		parts, err = buildParts(ix, parallel, cfg.Analysis)
	})
	if err != nil {
		return nil, fmt.Errorf("retrieval: %w", err)
	}
	r, err := newRetriever(ix, emb, tok, cfg, parts)
	if err != nil {
		return nil, err
	}
	ix.ReleaseMapped()
	return r, nil
}

// EmbedderFor returns the embedder that computes query vectors comparable with ix's.
func EmbedderFor(ix *index.Index, remote embedding.Embedder) (embedding.Embedder, error) {
	if strings.HasPrefix(ix.Manifest.Embedder, "local-") {
		l := embedding.NewLocal(embedding.LocalConfig{})
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
