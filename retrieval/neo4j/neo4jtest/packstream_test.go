package neo4jtest

import (
	"bytes"
	"encoding/hex"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestEncode checks encodings against the PackStream specification's examples and its size boundaries.
func TestEncode(t *testing.T) {
	tests := []struct {
		v    any
		want string // hex of the whole encoding, or of its first bytes when it ends with "..."
	}{
		{nil, "c0"}, {true, "c3"}, {false, "c2"},
		{int64(1), "01"}, {int64(127), "7f"}, {int64(-16), "f0"}, {int64(-17), "c8ef"}, {int64(-128), "c880"},
		{int64(128), "c90080"}, {int64(-129), "c9ff7f"}, {int64(32767), "c97fff"}, {int64(32768), "ca00008000"},
		{int64(math.MinInt32), "ca80000000"}, {int64(math.MaxInt32) + 1, "cb0000000080000000"},
		{int64(math.MinInt64), "cb8000000000000000"}, {7, "07"},
		{1.1, "c13ff199999999999a"}, {-1.1, "c1bff199999999999a"},
		{"", "80"}, {"A", "8141"}, {strings.Repeat("a", 15), "8f..."}, {strings.Repeat("a", 16), "d010..."},
		{strings.Repeat("a", 256), "d10100..."}, {strings.Repeat("a", 65536), "d200010000..."},
		{[]byte{1, 2}, "cc020102"},
		{[]any{}, "90"}, {[]any{int64(1), int64(2), int64(3)}, "93010203"}, {[]string{"a"}, "918161"}, {[]int64{1, 200}, "9201c900c8"},
		{make([]any, 16), "d410c0..."},
		{map[string]any{}, "a0"}, {map[string]any{"a": int64(1)}, "a1816101"},
		{Structure{Tag: 0x70, Fields: []any{map[string]any{}}}, "b170a0"},
	}
	for _, tt := range tests {
		got, err := Encode(nil, tt.v)
		if err != nil {
			t.Errorf("Encode(%.40v): %v", tt.v, err)
			continue
		}
		hx := hex.EncodeToString(got)
		if prefix, ok := strings.CutSuffix(tt.want, "..."); ok {
			if !strings.HasPrefix(hx, prefix) {
				t.Errorf("Encode(%.40v) = %.20s...; want %s", tt.v, hx, tt.want)
			}
		} else if hx != tt.want {
			t.Errorf("Encode(%.40v) = %s; want %s", tt.v, hx, tt.want)
		}
	}
	for _, v := range []any{uint8(1), struct{}{}, Structure{Fields: make([]any, 16)}, []any{struct{}{}}} {
		if _, err := Encode(nil, v); err == nil {
			t.Errorf("Encode(%#v) succeeded; want an error", v)
		}
	}
}

func roundTripValues() []any {
	big := map[string]any{}
	for _, k := range strings.Split("abcdefghijklmnopqrstuvwxyz", "") {
		big[k] = k
	}
	return []any{
		nil, true, int64(0), int64(-17), int64(1 << 40), math.Inf(-1), 0.5, "héllo", strings.Repeat("x", 70000),
		[]byte{}, bytes.Repeat([]byte{7}, 300),
		[]any{nil, "a", []any{int64(1), 2.5}, map[string]any{"k": []any{}}},
		big,
		// A Node as Bolt 5 sends it: id, labels, properties, element id.
		Structure{Tag: 'N', Fields: []any{int64(3), []any{"Page"}, map[string]any{"url": "https://x.edu/a", "page_id": int64(0)}, "4:db:3"}},
		// A Relationship: id, start, end, type, properties, and the three element ids.
		Structure{Tag: 'R', Fields: []any{int64(9), int64(3), int64(4), "LINKS_TO", map[string]any{}, "5:db:9", "4:db:3", "4:db:4"}},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, v := range roundTripValues() {
		b, err := Encode(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		got, rest, err := Decode(append(b, 0xC0))
		if err != nil {
			t.Errorf("Decode(Encode(%.40v)): %v", v, err)
			continue
		}
		if diff := cmp.Diff(v, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("round trip (-want +got):\n%.2000s", diff)
		}
		if !bytes.Equal(rest, []byte{0xC0}) {
			t.Errorf("Decode left %x after %.40v; want the next value c0", rest, v)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"truncated float", "c13ff1"},
		{"truncated int64", "cb0000"},
		{"truncated string", "8341"},
		{"truncated size", "d1"},
		{"unknown marker", "c4"},
		{"reserved marker", "e0"},
		{"list longer than its bytes", "d6ffffffff"},
		{"map longer than its bytes", "daffffffff"},
		{"map key not a string", "a10101"},
		{"structure without its tag", "b1"},
		{"structure without its fields", "b170"},
		{"nested too deep", strings.Repeat("91", maxDepth+2) + "c0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := hex.DecodeString(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if v, _, err := Decode(b); err == nil {
				t.Errorf("Decode(%s) = %v; want an error", tt.in, v)
			}
		})
	}
}

// FuzzDecode: arbitrary bytes never panic the decoder, and whatever decodes encodes to bytes that decode to
// the same value.
func FuzzDecode(f *testing.F) {
	for _, v := range roundTripValues() {
		b, err := Encode(nil, v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0xda, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, _, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Encode(nil, v)
		if err != nil {
			t.Fatalf("Encode of a decoded %T: %v", v, err)
		}
		w, rest, err := Decode(again)
		if err != nil || len(rest) != 0 {
			t.Fatalf("Decode(Encode(v)) = %v, %x left", err, rest)
		}
		if diff := cmp.Diff(v, w, cmpopts.EquateNaNs()); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
	})
}
