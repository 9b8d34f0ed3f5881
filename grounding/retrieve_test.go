package grounding

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/server"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// timings matches the body's "timings" object and timingValue one stage's time in it: the stages are part of the
// shape, their times are not.
var (
	timings     = regexp.MustCompile(`"timings":\{[^}]*\}`)
	timingValue = regexp.MustCompile(`("[a-z]+":)"[^"]*"`)
)

// TestRetrieveBody checks the whole body of POST /v1/retrieve against testdata/retrieve/*.json, byte for byte
// but for the stage times; -update rewrites the files.
func TestRetrieveBody(t *testing.T) {
	r, tok := exampleIndex(t)
	g := &Grounder{Retriever: r, Tokenizer: tok}
	h := newHarness(t, server.Config{Grounder: g}, openaitest.Config{})
	tests := []struct{ name, body string }{
		{"query", `{"query":"how much is in-state tuition?"}`},
		{"nothing", `{"query":"qwxz zzkv"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := h.post(t, "/retrieve", tt.body)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			got := timings.ReplaceAllFunc([]byte(body), func(b []byte) []byte {
				return timingValue.ReplaceAll(b, []byte(`$1"<time>"`))
			})
			file := filepath.Join("testdata", "retrieve", tt.name+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if !bytes.Equal(want, got) {
				t.Errorf("body differs from %s (-want +got):\n%s", file, cmp.Diff(string(want), string(got)))
			}
		})
	}
}
