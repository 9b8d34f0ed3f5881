package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Key returns the hex SHA-256 of the canonical JSON of parts (see Canonical), for keys that must not depend on
// how a client ordered or spaced its JSON. A part that cannot be encoded as JSON (invalid raw JSON from a
// client, a NaN, a channel) is hashed through a tagged description of it instead, so Key never fails and
// never panics.
func Key(parts ...any) string {
	h := sha256.New()
	for _, p := range parts {
		b, err := Canonical(p)
		if err != nil {
			b, _ = json.Marshal(map[string]string{"unencodable": fmt.Sprintf("%T %v", p, p)})
		}
		// A length prefix keeps ("ab","c") and ("a","bc") apart.
		fmt.Fprintf(h, "%d:", len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Canonical returns the canonical JSON of v: object keys sorted, no insignificant space, numbers in one
// form (integers as integers, other numbers in the shortest form that round-trips a float64, so 1, 1.0 and
// 1e0 agree), and no HTML escaping. v may be a json.RawMessage or hold them anywhere inside; their content is
// canonicalised like the rest.
func Canonical(v any) ([]byte, error) {
	var raw []byte
	switch x := v.(type) {
	case json.RawMessage:
		raw = x
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("cache: canonical json: %w", err)
		}
		raw = b
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("cache: canonical json: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("cache: canonical json: trailing data after value")
	}
	tree, err := canonicalNumbers(tree)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(tree); err != nil {
		return nil, fmt.Errorf("cache: canonical json: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// canonicalNumbers rewrites every json.Number in a decoded tree into its canonical form. Maps are encoded
// with sorted keys by encoding/json.
func canonicalNumbers(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		return canonicalNumber(x)
	case map[string]any:
		for k, e := range x {
			c, err := canonicalNumbers(e)
			if err != nil {
				return nil, err
			}
			x[k] = c
		}
	case []any:
		for i, e := range x {
			c, err := canonicalNumbers(e)
			if err != nil {
				return nil, err
			}
			x[i] = c
		}
	}
	return v, nil
}

func canonicalNumber(n json.Number) (json.Number, error) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return json.Number(strconv.FormatInt(i, 10)), nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) {
		return "", fmt.Errorf("cache: canonical json: number %q out of range", string(n))
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return json.Number(strconv.FormatInt(int64(f), 10)), nil
	}
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
}
