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
	return New(ix, emb, tok, cfg)
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
