package cache

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCanonical(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"sorted keys", json.RawMessage(`{"b":1,"a":{"d":2,"c":3}}`), `{"a":{"c":3,"d":2},"b":1}`},
		{"whitespace", json.RawMessage(" [ 1 , \"x\" ,\n null ] "), `[1,"x",null]`},
		{"integral floats", json.RawMessage(`[1.0, 1e0, 100e-2, -0.0, 2E3]`), `[1,1,1,0,2000]`},
		{"fractions", json.RawMessage(`[0.70, 7e-1, 1.5e300]`), `[0.7,0.7,1.5e+300]`},
		{"big integer kept exact", json.RawMessage(`9007199254740993`), `9007199254740993`},
		{"no html escaping", json.RawMessage(`"<a&b>"`), `"<a&b>"`},
		{"go map", map[string]any{"z": 1, "a": []int{2, 1}}, `{"a":[2,1],"z":1}`},
		{"struct with raw field", struct {
			Model    string          `json:"model"`
			Messages json.RawMessage `json:"messages"`
		}{"m", json.RawMessage(`[{"role":"user","content":"hi"}]`)}, `{"messages":[{"content":"hi","role":"user"}],"model":"m"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Canonical(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCanonicalErrors(t *testing.T) {
	for _, in := range []any{json.RawMessage(`{"a":`), json.RawMessage(`1 2`), json.RawMessage(`1e999`), math.NaN(), make(chan int)} {
		if got, err := Canonical(in); err == nil {
			t.Errorf("Canonical(%v) = %s, want an error", in, got)
		}
	}
}

func TestKey(t *testing.T) {
	same := [][]any{
		{"gpt-4o-mini", json.RawMessage(`{"temperature":0,"top_p":1}`)},
		{"gpt-4o-mini", json.RawMessage(`{ "top_p": 1.0, "temperature": 0.0 }`)},
		{"gpt-4o-mini", map[string]float64{"top_p": 1, "temperature": 0}},
	}
	want := Key(same[0]...)
	if len(want) != 64 {
		t.Errorf("Key length = %d, want 64 hex digits", len(want))
	}
	for _, parts := range same[1:] {
		if got := Key(parts...); got != want {
			t.Errorf("Key(%v) = %s, want %s as for %v", parts, got, want, same[0])
		}
	}
	different := [][]any{
		{"gpt-4o", json.RawMessage(`{"temperature":0,"top_p":1}`)},
		{"gpt-4o-mini", json.RawMessage(`{"temperature":0.2,"top_p":1}`)},
		{json.RawMessage(`{"temperature":0,"top_p":1}`), "gpt-4o-mini"},
		{"gpt-4o-mini", json.RawMessage(`{"temperature":0,"top_p":1}`), nil},
		{"ab", "c"},
		{"a", "bc"},
		{json.RawMessage(`{"temperature":`)},
		{math.NaN()},
	}
	seen := map[string]int{want: -1}
	for i, parts := range different {
		k := Key(parts...)
		if j, dup := seen[k]; dup {
			t.Errorf("Key(%v) collides with case %d", parts, j)
		}
		seen[k] = i
	}
	if a, b := Key(json.RawMessage(`{"a":`)), Key(json.RawMessage(`{"a":`)); a != b {
		t.Error("Key of invalid JSON is not deterministic")
	}
}

// FuzzCanonical checks that canonical JSON never panics, is a fixed point, is valid JSON and ignores
// formatting.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1.0,"x",null,true]}`, `[1e0, -0.0, 9007199254740993]`, `"<&>"`, `{"a":{"b":{}}}`, `{"a":`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := Canonical(json.RawMessage(in))
		if err != nil {
			if k := Key(json.RawMessage(in)); len(k) != 64 {
				t.Fatalf("Key of uncanonicalisable input %q = %q, want 64 hex digits", in, k)
			}
			return
		}
		if !json.Valid(got) {
			t.Fatalf("Canonical(%q) = %q, not valid JSON", in, got)
		}
		again, err := Canonical(json.RawMessage(got))
		if err != nil || string(again) != string(got) {
			t.Fatalf("Canonical not a fixed point: %q -> %q -> %q (%v)", in, got, again, err)
		}
		var v any
		dec := json.NewDecoder(strings.NewReader(in))
		dec.UseNumber()
		if err := dec.Decode(&v); err == nil {
			indented, _ := json.MarshalIndent(v, "", "  ")
			if re, err := Canonical(json.RawMessage(indented)); err == nil && string(re) != string(got) {
				t.Fatalf("reformatted input changed the canonical form: %q vs %q", re, got)
			}
		}
	})
}
