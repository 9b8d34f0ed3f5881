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

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	rec := r.Context().Value(reqKey{}).(*Request)
	var body struct {
		Input          json.RawMessage `json:"input"`
		Model          string          `json:"model"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     int             `json:"dimensions"`
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
		writeError(w, http.StatusBadRequest, "", "")
		return
	}
	dims := s.cfg.Dimensions
	if body.Dimensions > 0 {
		dims = body.Dimensions
	}
	type item struct {
		Object    string `json:"object"`
		Index     int    `json:"index"`
		Embedding any    `json:"embedding"`
	}
	data := make([]item, len(inputs))
	tokens := 0
	for i, in := range inputs {
		v := Vector(in, dims)
		tokens += len(strings.Fields(in))
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
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data, "model": body.Model,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens}})
}

// embeddingInputs accepts a string, an array of strings, an array of token
// ids or an array of token arrays (token ids become their decimal text).
func embeddingInputs(raw json.RawMessage) ([]string, error) {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil && len(many) > 0 {
		return many, nil
	}
	var toks []int
	if json.Unmarshal(raw, &toks) == nil && len(toks) > 0 {
		return []string{fmt.Sprint(toks)}, nil
	}
	var toks2 [][]int
	if json.Unmarshal(raw, &toks2) == nil && len(toks2) > 0 {
		out := make([]string, len(toks2))
		for i, t := range toks2 {
			out[i] = fmt.Sprint(t)
		}
		return out, nil
	}
	return nil, fmt.Errorf("embeddings: unsupported input")
}
