package openaitest

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"strings"

	"github.com/ragproxy/ragproxy/tokenizer"
)

// Vector returns the fake's embedding of text: a deterministic unit vector
// of dims floats seeded by the text's FNV-64a hash.
func Vector(text string, dims int) []float32 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(text))
	x := h.Sum64() | 1
	v := make([]float32, dims)
	var norm float64
	for i := range v {
		// xorshift64*
		x ^= x >> 12
		x ^= x << 25
		x ^= x >> 27
		f := float64(int64(x*2685821657736338717)>>11) / float64(1<<52)
		v[i] = float32(f)
		norm += f * f
	}
	norm = math.Sqrt(norm)
	if norm == 0 {
		return v
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / norm)
	}
	return v
}

// The embeddings caps of OpenAI's API reference ("Create embeddings": input
// "cannot exceed the max input tokens for the model (8192 tokens for all
// embedding models), cannot be an empty string, and any array must be 2048
// dimensions or less"; "the maximum number of tokens summed across all inputs
// in a single request is 300,000").
const (
	maxEmbeddingInputs         = 2048
	maxEmbeddingInputTokens    = 8192
	maxEmbeddingRequestTokens  = 300_000
	embeddingsEndpoint         = "embeddings"
	chatEndpoint               = "chat/completions"
	textEmbedding3Prefix       = "text-embedding-3-"
	invalidInputMessage        = "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference."
	dimensionsNotSupportedText = "This model does not support specifying dimensions."
)

// embeddingInput is one input: its text, or its token ids when the caller
// sent tokens.
type embeddingInput struct {
	text   string
	tokens []int
}

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	rec := r.Context().Value(reqKey{}).(*Request)
	if s.embeddingFault(w, r, rec) {
		return
	}
	var body struct {
		Input          json.RawMessage `json:"input"`
		Model          string          `json:"model"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     *int            `json:"dimensions"`
	}
	if err := json.Unmarshal(rec.bodyOrNil(), &body); err != nil || body.Input == nil {
		writeError(w, http.StatusBadRequest, "", "")
		return
	}
	if !s.models[body.Model] {
		writeError(w, http.StatusNotFound, "", body.Model)
		return
	}
	inputs, err := embeddingInputs(body.Input)
	if err != nil {
		s.refuse(w, invalid(invalidInputMessage, "", ""))
		return
	}
	if e := s.checkEmbeddings(body.Model, body.Dimensions, inputs); e != nil {
		s.refuse(w, e)
		return
	}
	tokens, e := s.embeddingTokens(inputs)
	if e != nil {
		s.refuse(w, e)
		return
	}
	if e := s.admit(w, r, body.Model, tokens); e != nil {
		s.refuse(w, e)
		return
	}
	dims := s.cfg.Dimensions
	if body.Dimensions != nil {
		dims = *body.Dimensions
	}
	type item struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"`
	}
	data := make([]item, len(inputs))
	for i, in := range inputs {
		text := in.text
		if in.tokens != nil {
			text = fmt.Sprint(in.tokens)
		}
		v := Vector(text, dims)
		var emb any = v
		if body.EncodingFormat == "base64" {
			b := make([]byte, 4*len(v))
			for j, f := range v {
				binary.LittleEndian.PutUint32(b[4*j:], math.Float32bits(f))
			}
			emb = base64.StdEncoding.EncodeToString(b)
		}
		data[i] = item{Object: "embedding", Index: i, Embedding: emb}
	}
	s.bill(bearer(r), embeddingsEndpoint, body.Model, tokens)
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data, "model": body.Model,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
}

// checkEmbeddings applies the rules that need no token counts.
func (s *Server) checkEmbeddings(model string, dimensions *int, inputs []embeddingInput) *apiError {
	if n := len(inputs); n > maxEmbeddingInputs {
		// OpenAI's message for an array over its maximum length, as it words
		// it for every array parameter.
		return invalid(fmt.Sprintf("Invalid 'input': array too long. Expected an array with maximum length %d, but got an array with length %d instead.",
			maxEmbeddingInputs, n), "input", "array_above_max_length")
	}
	for _, in := range inputs {
		if in.tokens == nil && in.text == "" {
			// OpenAI's answer to an empty string, alone or in an array.
			return invalid(invalidInputMessage, "", "")
		}
	}
	if dimensions != nil {
		if !strings.HasPrefix(model, textEmbedding3Prefix) {
			return invalid(dimensionsNotSupportedText, "", "")
		}
		if *dimensions < 1 {
			return invalid(fmt.Sprintf("Invalid 'dimensions': integer below minimum value. Expected a value >= 1, but got %d instead.", *dimensions),
				"dimensions", "integer_below_min_value")
		}
	}
	return nil
}

// embeddingTokens counts the inputs' tokens as OpenAI bills them, cl100k_base
// for text (the encoding of text-embedding-3 and text-embedding-ada-002) and
// the ids themselves for tokens, and applies the per-input and per-request
// caps.
func (s *Server) embeddingTokens(inputs []embeddingInput) (int, *apiError) {
	s.cl100kOnce.Do(func() { s.cl100k, s.cl100kErr = tokenizer.NewEncoding(tokenizer.CL100kBase) })
	if s.cl100kErr != nil {
		return 0, &apiError{status: http.StatusInternalServerError, typ: "server_error", message: s.cl100kErr.Error()}
	}
	total := 0
	for _, in := range inputs {
		n := len(in.tokens)
		if in.tokens == nil {
			n = s.cl100k.Count(in.text)
		}
		if n > maxEmbeddingInputTokens {
			// The message OpenAI sends for an input over the model's context.
			return 0, invalid(fmt.Sprintf("This model's maximum context length is %d tokens, however you requested %d tokens (%d in your prompt; 0 for the completion). Please reduce your prompt; or completion length.",
				maxEmbeddingInputTokens, n, n), "", "")
		}
		total += n
	}
	if total > maxEmbeddingRequestTokens {
		// OpenAI's per-request cap, whose type and code are both
		// max_tokens_per_request.
		return 0, &apiError{status: http.StatusBadRequest, typ: "max_tokens_per_request", code: "max_tokens_per_request",
			message: fmt.Sprintf("Requested %d tokens, max %d tokens per request", total, maxEmbeddingRequestTokens)}
	}
	return total, nil
}

// embeddingInputs accepts a string, an array of strings, an array of token
// ids or an array of token arrays; an empty array is invalid.
func embeddingInputs(raw json.RawMessage) ([]embeddingInput, error) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []embeddingInput{{text: one}}, nil
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil && len(many) > 0 {
		out := make([]embeddingInput, len(many))
		for i, m := range many {
			out[i] = embeddingInput{text: m}
		}
		return out, nil
	}
	var toks []int
	if json.Unmarshal(raw, &toks) == nil && len(toks) > 0 {
		return []embeddingInput{{tokens: toks}}, nil
	}
	var toks2 [][]int
	if json.Unmarshal(raw, &toks2) == nil && len(toks2) > 0 {
		out := make([]embeddingInput, len(toks2))
		for i, t := range toks2 {
			if len(t) == 0 {
				return nil, fmt.Errorf("embeddings: empty token array")
			}
			out[i] = embeddingInput{tokens: t}
		}
		return out, nil
	}
	return nil, fmt.Errorf("embeddings: unsupported input")
}
