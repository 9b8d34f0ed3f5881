// Package tokenizer counts, encodes, decodes and truncates text with OpenAI's o200k_base byte-pair encoding
// (the tokenizer of gpt-4o and gpt-4o-mini), entirely offline.
//
// The BPE ranks come from github.com/pkoukk/tiktoken-go-loader, which embeds them in the binary; the default
// loader of github.com/pkoukk/tiktoken-go downloads them at run time, which fails on machines without internet.
//
// A *Tokenizer is safe for concurrent use: tiktoken-go's encoder only reads its maps after construction, and
// its regexp2 patterns take their per-match state from a mutex-guarded pool.
package tokenizer

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// EncodingName is the name of the encoding every Tokenizer uses.
const EncodingName = "o200k_base"

// loadO200k builds the o200k_base encoder once per process.
//
// This is the one piece of package-level state, and it is deliberate: building the encoder parses about
// 200k embedded ranks and sorts them (tens to hundreds of milliseconds and tens of MB), the result is never
// mutated afterwards, and tiktoken-go's SetBpeLoader is itself process-wide state, so it must be set exactly
// once, before the first GetEncoding, rather than by each caller. Doing it here (and not in init) keeps
// programs that never count tokens from paying for it.
var loadO200k = sync.OnceValues(func() (*tiktoken.Tiktoken, error) {
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	return tiktoken.GetEncoding(EncodingName)
})

// Tokenizer counts and encodes text with o200k_base. The zero value is not usable; call New.
type Tokenizer struct {
	enc *tiktoken.Tiktoken
}

// New returns a Tokenizer for o200k_base. The first call in a process loads the embedded encoding; later
// calls share it and return at once.
func New() (*Tokenizer, error) {
	enc, err := loadO200k()
	if err != nil {
		return nil, fmt.Errorf("tokenizer: load %s: %w", EncodingName, err)
	}
	return &Tokenizer{enc: enc}, nil
}

// Name returns the encoding name, "o200k_base".
func (t *Tokenizer) Name() string { return EncodingName }

// Encode returns the token ids of s. Special-token text such as "<|endoftext|>" is encoded as ordinary text,
// so untrusted input can never produce a control token. Invalid UTF-8 bytes are encoded as U+FFFD.
func (t *Tokenizer) Encode(s string) []int {
	if s == "" {
		return nil
	}
	return t.enc.EncodeOrdinary(s)
}

// Count returns the number of tokens of s, as Encode counts them.
func (t *Tokenizer) Count(s string) int {
	if s == "" {
		return 0
	}
	return len(t.enc.EncodeOrdinary(s))
}

// Decode returns the text of tokens. Ids outside the vocabulary decode to nothing. A slice that ends inside
// a multi-byte character decodes to an incomplete UTF-8 sequence, as tiktoken does.
func (t *Tokenizer) Decode(tokens []int) string {
	if len(tokens) == 0 {
		return ""
	}
	return t.enc.Decode(tokens)
}

// Truncate returns the longest prefix of s, cut at a token boundary and never inside a UTF-8 character,
// whose Count is at most maxTokens. It returns s itself when s fits and "" when maxTokens <= 0.
// For valid UTF-8 input the result is a byte prefix of s; invalid bytes are first replaced by U+FFFD.
func (t *Tokenizer) Truncate(s string, maxTokens int) string {
	if maxTokens <= 0 || s == "" {
		return ""
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	toks := t.enc.EncodeOrdinary(s)
	if len(toks) <= maxTokens {
		return s
	}
	for k := maxTokens; k > 0; {
		prefix := trimPartialRune(t.enc.Decode(toks[:k]))
		if prefix == "" {
			k--
			continue
		}
		// Re-encoding a prefix almost always yields the same tokens, but BPE does not promise it (the
		// pre-tokenizer may group a cut whitespace run differently): check, and step back by the excess.
		n := len(t.enc.EncodeOrdinary(prefix))
		if n <= maxTokens {
			return prefix
		}
		k -= max(1, n-maxTokens)
	}
	return ""
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of s, left when a token boundary falls
// inside a multi-byte character.
func trimPartialRune(s string) string {
	for i := 0; i < utf8.UTFMax && len(s) > 0; i++ {
		r, size := utf8.DecodeLastRuneInString(s)
		if r != utf8.RuneError || size > 1 {
			return s
		}
		s = s[:len(s)-1]
	}
	return s
}
