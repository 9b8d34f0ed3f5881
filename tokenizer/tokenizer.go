// Package tokenizer counts, encodes, decodes and truncates text with OpenAI's o200k_base byte-pair encoding
// (the tokenizer of gpt-4o and gpt-4o-mini), entirely offline. It also has cl100k_base, the encoding OpenAI
// counts embeddings inputs with (text-embedding-3-small and -large, text-embedding-ada-002), so that a batch
// can be cut as the upstream counts it.
//
// The BPE ranks come from github.com/pkoukk/tiktoken-go-loader, which embeds them in the binary. The
// pre-tokeniser and the merge loop are this package's own: github.com/pkoukk/tiktoken-go gives the same
// tokens but splits text with a backtracking regular-expression engine and merges in quadratic time, about
// a hundred times slower. Its tests check, token for token, that Encode agrees with tiktoken-go.
//
// A *Tokenizer is safe for concurrent use: the encoding is read-only after loading, and the per-Tokenizer
// cache of merged pieces is guarded by sharded locks.
package tokenizer

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// Encoding names, as tiktoken spells them.
const (
	// O200kBase is the encoding of gpt-4o, gpt-4o-mini, gpt-4.1, the o-series and gpt-5.
	O200kBase = "o200k_base"
	// CL100kBase is the encoding of gpt-4, gpt-3.5-turbo and OpenAI's embeddings models.
	CL100kBase = "cl100k_base"
)

// EncodingName is the name of the encoding New uses.
const EncodingName = O200kBase

// The file names under which tiktoken-go-loader embeds the ranks; the loader uses only the base name of
// these URLs and never fetches them.
const (
	o200kFile  = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
	cl100kFile = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
)

// The control tokens of each encoding (tiktoken's openai_public.py). Encode never produces them; Decode
// renders them as text, as tiktoken does.
var (
	o200kSpecial  = map[int]string{199999: "<|endoftext|>", 200018: "<|endofprompt|>"}
	cl100kSpecial = map[int]string{100257: "<|endoftext|>", 100258: "<|fim_prefix|>", 100259: "<|fim_middle|>",
		100260: "<|fim_suffix|>", 100276: "<|endofprompt|>"}
)

// encoder is a loaded encoding. It is never modified after loading.
type encoder struct {
	name    string
	ranks   map[string]int // token bytes -> id
	special map[int]string
	// decoder maps an id to its token bytes ("" for unused ids). Counting and encoding never need it, so it is
	// built on the first decode: 3 MB a server that only counts does not hold.
	decoder  func() []string
	byteRank [256]int // id of each single byte
	classes  *classTable
	// split returns the end of the pre-tokenisation piece at s[i]: the encodings differ in their patterns.
	split func(t *classTable, s string, i int) int
}

// next returns the end of the piece that starts at s[i], i < len(s); s must be valid UTF-8.
func (e *encoder) next(s string, i int) int { return e.split(e.classes, s, i) }

// loadO200k builds the encoding once per process.
//
// This is the one piece of package-level state, and it is deliberate: loading parses about 200k embedded
// ranks (tens of milliseconds and tens of MB), and the result is never mutated afterwards. Doing it here
// (and not in init) keeps programs that never count tokens from paying for it.
// cl100k_base is loaded the same way, on first use, and only by programs that ask for it.
var (
	loadO200k = sync.OnceValues(func() (*encoder, error) {
		return loadEncoder(O200kBase, o200kFile, o200kSpecial, (*classTable).nextPiece)
	})
	loadCL100k = sync.OnceValues(func() (*encoder, error) {
		return loadEncoder(CL100kBase, cl100kFile, cl100kSpecial, (*classTable).nextPieceCL100k)
	})
)

// loadEncoder parses embedded ranks and builds the decoding and character tables.
func loadEncoder(name, file string, special map[int]string, split func(*classTable, string, int) int) (*encoder, error) {
	ranks, err := tiktoken_loader.NewOfflineLoader().LoadTiktokenBpe(file)
	if err != nil {
		return nil, err
	}
	e := &encoder{name: name, ranks: ranks, special: special, classes: newClassTable(), split: split}
	e.decoder = sync.OnceValue(e.buildDecoder)
	for b := range 256 {
		id, ok := ranks[string([]byte{byte(b)})]
		if !ok {
			return nil, fmt.Errorf("byte %#x has no rank", b)
		}
		e.byteRank[b] = id
	}
	return e, nil
}

// buildDecoder makes the id -> token bytes table.
func (e *encoder) buildDecoder() []string {
	maxID := 0
	for id := range e.special {
		maxID = max(maxID, id)
	}
	for _, id := range e.ranks {
		maxID = max(maxID, id)
	}
	decoder := make([]string, maxID+1)
	for tok, id := range e.ranks {
		decoder[id] = tok
	}
	for id, text := range e.special {
		decoder[id] = text
	}
	return decoder
}

// Tokenizer counts and encodes text with one encoding, o200k_base unless made by NewEncoding. The zero
// value is not usable; call New.
type Tokenizer struct {
	enc   *encoder
	hot   *hotCache   // short pieces -> count (and token)
	cache *pieceCache // pieces that need merging -> tokens
}

// New returns a Tokenizer for o200k_base. The first call in a process loads the embedded encoding; later
// calls share it and return at once. Each Tokenizer has its own bounded cache of merged pieces, so share
// one Tokenizer rather than calling New per use.
func New() (*Tokenizer, error) {
	enc, err := loadO200k()
	if err != nil {
		return nil, fmt.Errorf("tokenizer: load %s: %w", EncodingName, err)
	}
	return &Tokenizer{enc: enc, hot: new(hotCache), cache: newPieceCache()}, nil
}

// NewEncoding returns a Tokenizer for the named encoding, O200kBase or CL100kBase, loading it on first use
// as New does.
func NewEncoding(name string) (*Tokenizer, error) {
	var load func() (*encoder, error)
	switch name {
	case O200kBase:
		load = loadO200k
	case CL100kBase:
		load = loadCL100k
	default:
		return nil, fmt.Errorf("tokenizer: unknown encoding %q", name)
	}
	enc, err := load()
	if err != nil {
		return nil, fmt.Errorf("tokenizer: load %s: %w", name, err)
	}
	return &Tokenizer{enc: enc, hot: new(hotCache), cache: newPieceCache()}, nil
}

// ForModel returns the encoding OpenAI counts a model's tokens with: cl100k_base for the embeddings models
// (text-embedding-3-small, -3-large, text-embedding-ada-002), gpt-4 and gpt-4-turbo and gpt-3.5-turbo;
// o200k_base for gpt-4o, gpt-4.1, gpt-4.5, the o-series, gpt-5 and any model it does not know (the
// encoding of every chat model OpenAI has released since gpt-4o). The table follows tiktoken's model.py.
func ForModel(model string) string {
	for _, p := range []string{"gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5"} {
		if strings.HasPrefix(model, p) {
			return O200kBase
		}
	}
	for _, p := range []string{"text-embedding-3-", "text-embedding-ada-002", "gpt-4", "gpt-3.5", "gpt-35"} {
		if strings.HasPrefix(model, p) {
			return CL100kBase
		}
	}
	return O200kBase
}

// Name returns the encoding name, "o200k_base" or "cl100k_base".
func (t *Tokenizer) Name() string { return t.enc.name }

// Encode returns the token ids of s. Special-token text such as "<|endoftext|>" is encoded as ordinary text,
// so untrusted input can never produce a control token. Each byte of s that is not part of valid UTF-8 is
// encoded as U+FFFD, as tiktoken-go does (it converts the text to runes first).
func (t *Tokenizer) Encode(s string) []int {
	if s == "" {
		return nil
	}
	s = validUTF8(s)
	out := make([]int, 0, len(s)/4+1)
	for i := 0; i < len(s); {
		j := t.enc.next(s, i)
		out = t.appendPiece(out, s[i:j])
		i = j
	}
	return out
}

// Count returns the number of tokens of s, as Encode counts them.
func (t *Tokenizer) Count(s string) int {
	if s == "" {
		return 0
	}
	s = validUTF8(s)
	var scratch [linearMergeMax]int
	n := 0
	for i := 0; i < len(s); {
		j := t.enc.next(s, i)
		piece := s[i:j]
		i = j
		if len(piece) <= hotMaxLen {
			k0, k1 := hotKey(piece)
			if c, _, ok := t.hot.get(k0, k1, len(piece)); ok {
				n += c
				continue
			}
			toks := t.pieceTokens(scratch[:0], piece)
			n += len(toks)
			t.hot.put(k0, k1, len(piece), len(toks), toks[0])
			continue
		}
		n += len(t.pieceTokens(scratch[:0], piece))
	}
	return n
}

// appendPiece appends the tokens of one pre-tokenised piece to dst.
func (t *Tokenizer) appendPiece(dst []int, piece string) []int {
	if len(piece) > hotMaxLen {
		return t.pieceTokens(dst, piece)
	}
	k0, k1 := hotKey(piece)
	if c, tok, ok := t.hot.get(k0, k1, len(piece)); ok && c == 1 {
		return append(dst, tok)
	}
	n := len(dst)
	dst = t.pieceTokens(dst, piece)
	t.hot.put(k0, k1, len(piece), len(dst)-n, dst[n])
	return dst
}

// pieceTokens appends the tokens of one pre-tokenised piece to dst: the piece's own id when it is a
// token, else its merged tokens, from the cache when it has been merged before.
func (t *Tokenizer) pieceTokens(dst []int, piece string) []int {
	if id, ok := t.enc.ranks[piece]; ok {
		return append(dst, id)
	}
	if toks, ok := t.cache.get(piece); ok {
		return append(dst, toks...)
	}
	n := len(dst)
	dst = t.enc.bytePairEncode(dst, piece)
	t.cache.put(piece, dst[n:])
	return dst
}

// Decode returns the text of tokens. Ids outside the vocabulary decode to nothing. A slice that ends inside
// a multi-byte character decodes to an incomplete UTF-8 sequence, as tiktoken does.
func (t *Tokenizer) Decode(tokens []int) string {
	if len(tokens) == 0 {
		return ""
	}
	n := 0
	for _, id := range tokens {
		n += len(t.token(id))
	}
	b := make([]byte, 0, n)
	for _, id := range tokens {
		b = append(b, t.token(id)...)
	}
	return string(b)
}

// token returns the bytes of id, or "" if id is not in the vocabulary.
func (t *Tokenizer) token(id int) string {
	decoder := t.enc.decoder()
	if id < 0 || id >= len(decoder) {
		return ""
	}
	return decoder[id]
}

// Truncate returns the longest prefix of s, cut at a token boundary and never inside a UTF-8 character,
// whose Count is at most maxTokens. It returns s itself when s fits and "" when maxTokens <= 0.
// For valid UTF-8 input the result is a byte prefix of s; otherwise each invalid byte is first replaced by
// U+FFFD, as Encode does.
func (t *Tokenizer) Truncate(s string, maxTokens int) string {
	if maxTokens <= 0 || s == "" {
		return ""
	}
	s = validUTF8(s)
	// Pieces encode independently, so encoding can stop at the first piece that crosses the limit.
	var toks []int
	for i := 0; i < len(s) && len(toks) <= maxTokens; {
		j := t.enc.next(s, i)
		toks = t.appendPiece(toks, s[i:j])
		i = j
	}
	if len(toks) <= maxTokens {
		return s
	}
	for k := maxTokens; k > 0; {
		// The first k tokens spell the first off bytes of s.
		off := 0
		for _, id := range toks[:k] {
			off += len(t.token(id))
		}
		prefix := trimPartialRune(s[:off])
		if prefix == "" {
			k--
			continue
		}
		// Re-encoding a prefix almost always yields the same tokens, but BPE does not promise it (the
		// pre-tokenizer may group a cut whitespace run differently): check, and step back by the excess.
		n := t.Count(prefix)
		if n <= maxTokens {
			return prefix
		}
		k -= max(1, n-maxTokens)
	}
	return ""
}

// validUTF8 returns s with each byte that is not part of valid UTF-8 replaced by U+FFFD, the conversion
// of []rune(s) that tiktoken-go applies. Valid input is returned as is.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return string([]rune(s))
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
