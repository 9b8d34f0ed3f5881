package compat

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// chunkSeeds are chunks as OpenAI and other upstreams write them, and the odd shapes a reader must survive.
var chunkSeeds = []string{
	string(chunkSample),
	`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"c1","choices":[{"index":0,"delta":{"content":"line\nnext \"quoted\" \\ back\/slash \u00e9\u4e2d \ud83d\ude00 \ud800 tail\t"}}]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\":[1,2.5e-3,true,false,null]}"}}]},"finish_reason":null}]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{"refusal":"no"}}]}`,
	`{"id":"c1","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":0}}}`,
	`{"id":"c1","choices":[{"index":1,"delta":{"content":"b"}},{"index":0,"delta":{"content":"a"},"finish_reason":"length"}]}`,
	` { "id" : "c1" , "model" : "m" , "created" : -7 , "choices" : [ { "index" : 2 , "delta" : { "content" : null } } ] } `,
	"{\"id\":\"c1\",\r\n\t\"choices\":[]}",
	`{"\u0069d":"escaped key","choices":"not an array","usage":[1],"created":1.5}`,
	`{"id":5,"model":null,"choices":[7,{"index":"x","delta":"y","finish_reason":3}]}`,
	`{"id":"a","id":"b","choices":[{"delta":{"content":"1"}}],"choices":[{"delta":{"content":"2"}}]}`,
	`{"created":9223372036854775807,"choices":[{"index":99999999999999999999}]}`,
	`{"id":"c1","choices":[{"index":0,"delta":{"content":"x"},"logprobs":{"content":[{"token":"x","logprob":NaN,"top_logprobs":[]}]}}]}`,
	`{"id":"c1","created":-inf,"choices":[{"index":NaN,"delta":{"content":"y"},"logprobs":[Inf,-INF,+inf,nan]}]}`,
	`{}`,
	`[]`,
	`"chunk"`,
	`null`,
	`{"id":`,
	`{"id":"c1"}}`,
	`{"id":"c1",}`,
	`{"id":"\x"}`,
	`{"id":"\u12"}`,
	`{"created":01}`,
	`{"created":1.}`,
	`{"created":-}`,
	`{"a":tru}`,
	`{"a":[1,]}`,
	`{"a" 1}`,
	`{"id":"c1"} x`,
	``,
	`{"a":` + strings.Repeat(`[`, 200) + strings.Repeat(`]`, 200) + `}`,
}

// TestScanChunkAgreesWithFastjson holds scanChunk to the fastjson reader the relay used before it, on the seeds and
// on thousands of mutations of them: wherever encoding/json finds JSON, both read the same Chunk (or both find no
// object); wherever it does not, scanChunk refuses it too. Mutations add no raw control characters, which
// scanChunk lets through inside strings as fastjson did.
func TestScanChunkAgreesWithFastjson(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte(`{}[]":,\/ -+.0123456789eEtrufalsn"abcdxyz` + "\u00e9")
	inputs := append([]string(nil), chunkSeeds...)
	for range 20000 {
		b := []byte(chunkSeeds[rng.IntN(len(chunkSeeds))])
		for range 1 + rng.IntN(3) {
			switch op := rng.IntN(3); {
			case op == 0 && len(b) > 0: // change a byte
				b[rng.IntN(len(b))] = alphabet[rng.IntN(len(alphabet))]
			case op == 1 && len(b) > 0: // drop a byte
				i := rng.IntN(len(b))
				b = append(b[:i], b[i+1:]...)
			default: // insert a byte
				i := rng.IntN(len(b) + 1)
				b = append(b[:i], append([]byte{alphabet[rng.IntN(len(alphabet))]}, b[i:]...)...)
			}
		}
		inputs = append(inputs, string(b))
	}
	valid := 0
	for _, in := range inputs {
		var got, want Chunk
		ok := scanChunk([]byte(in), &got)
		if !json.Valid([]byte(in)) {
			if nonFiniteOnly(in) {
				// NaN and the infinities, which fastjson read too: both must read the same chunk.
				if wantOK := readChunkFastjson([]byte(in), &want) == nil; ok && wantOK {
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("scanChunk(%q) (-fastjson +scanChunk):\n%s", in, diff)
					}
				} else if ok && !wantOK {
					t.Errorf("scanChunk accepted %q, which fastjson refused", in)
				}
				continue
			}
			if ok && !strings.ContainsFunc(in, func(r rune) bool { return r < 0x20 }) {
				t.Errorf("scanChunk accepted %q, which is not JSON", in)
			}
			continue
		}
		valid++
		if loneSurrogate.MatchString(in) {
			continue // fastjson keeps half a pair as its six characters (TestScanChunkLoneSurrogate)
		}
		wantOK := readChunkFastjson([]byte(in), &want) == nil
		if ok != wantOK {
			t.Errorf("scanChunk(%q) = %v, fastjson %v", in, ok, wantOK)
			continue
		}
		if diff := cmp.Diff(want, got); ok && diff != "" {
			t.Errorf("scanChunk(%q) (-fastjson +scanChunk):\n%s", in, diff)
		}
	}
	if valid < 1000 {
		t.Fatalf("only %d of %d inputs were JSON: the mutations test too little", valid, len(inputs))
	}
}

// nonFiniteOnly reports whether in would be JSON with its NaN and infinities read as numbers.
func nonFiniteOnly(in string) bool {
	lower := strings.ToLower(in)
	if !strings.Contains(lower, "nan") && !strings.Contains(lower, "inf") {
		return false
	}
	for _, w := range []string{"+infinity", "-infinity", "infinity", "+inf", "-inf", "inf", "+nan", "-nan", "nan"} {
		lower = strings.ReplaceAll(lower, w, "0")
	}
	return json.Valid([]byte(lower))
}

// FuzzScanChunk checks scanChunk against fastjson and encoding/json on whatever the fuzzer makes of the seeds (go
// test -fuzz FuzzScanChunk ./compat); as a plain test it runs the seeds.
func FuzzScanChunk(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var got, want Chunk
		ok := scanChunk(raw, &got)
		if !json.Valid(raw) || loneSurrogate.Match(raw) || nonFiniteOnly(string(raw)) {
			return // scanChunk may accept a raw control character in a string; nothing else (see the test above)
		}
		if wantOK := readChunkFastjson(raw, &want) == nil; ok != wantOK {
			t.Fatalf("scanChunk(%q) = %v, fastjson %v", raw, ok, wantOK)
		}
		if diff := cmp.Diff(want, got); ok && diff != "" {
			t.Fatalf("scanChunk(%q) (-fastjson +scanChunk):\n%s", raw, diff)
		}
	})
}

// A \u escape of half a surrogate pair reads as U+FFFD, as encoding/json reads it.
func TestScanChunkLoneSurrogate(t *testing.T) {
	raw := `{"choices":[{"delta":{"content":"a\ud800b\udc00c\ud83d\ude00"}}]}`
	var c Chunk
	if !scanChunk([]byte(raw), &c) {
		t.Fatal("refused")
	}
	var want struct {
		Choices []struct{ Delta struct{ Content string } }
	}
	if err := json.Unmarshal([]byte(raw), &want); err != nil {
		t.Fatal(err)
	}
	if got := c.Choices[0].Content; got != want.Choices[0].Delta.Content || got != "a\uFFFDb\uFFFDc\U0001F600" {
		t.Errorf("content %q, encoding/json %q", got, want.Choices[0].Delta.Content)
	}
}

func TestReadChunkErrors(t *testing.T) {
	for _, raw := range []string{`{"id":`, `[]`, `{"a":1} 2`, `{"a":` + strings.Repeat(`[`, maxChunkDepth) + strings.Repeat(`]`, maxChunkDepth) + `}`} {
		var c Chunk
		err := ReadChunk([]byte(raw), &c)
		if err == nil || !strings.HasPrefix(err.Error(), "parse chunk: ") {
			t.Errorf("ReadChunk(%q) = %v, want a parse chunk error", raw, err)
		}
	}
}

// An upstream served from Python may write NaN or an infinity in a chunk's logprobs, which JSON has no number for;
// the chunk is read, as fastjson read it.
func TestScanChunkNonFinite(t *testing.T) {
	var c Chunk
	raw := `{"id":"c1","choices":[{"index":0,"delta":{"content":"x"},"logprobs":{"content":[{"logprob":NaN},{"logprob":-Infinity}]}}]}`
	if err := ReadChunk([]byte(raw), &c); err != nil || len(c.Choices) != 1 || c.Choices[0].Content != "x" {
		t.Fatalf("ReadChunk(%q) = %+v, %v", raw, c, err)
	}
	for _, bad := range []string{`{"a":nul}`, `{"a":Infinit}`, `{"a":-}`, `{"a":NaNa}`} {
		if err := ReadChunk([]byte(bad), &c); err == nil {
			t.Errorf("ReadChunk(%q) accepted it", bad)
		}
	}
}
