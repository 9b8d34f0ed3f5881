package grounding

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/internal/indextest"
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

// TestRetrieveSections checks that a passage of /v1/retrieve links the section it starts in when its page gives
// that section an id: the example site's tuition page with ids on two of its headings.
func TestRetrieveSections(t *testing.T) {
	site := indextest.ExampleSite(t)
	page := filepath.Join(site, "tuition", "index.html")
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte("<h2>Refunds</h2>"), []byte(`<h2 id="refunds">Refunds</h2>`), 1)
	b = bytes.Replace(b, []byte("<h2>Payment deadlines</h2>"), []byte(`<h2 id="payment-deadlines">Payment deadlines</h2>`), 1)
	if err := os.WriteFile(page, b, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "index")
	indextest.Build(t, site, examples.BaseURL, dir)
	r, tok := indextest.Open(t, dir)
	h := newHarness(t, server.Config{Grounder: &Grounder{Retriever: r, Tokenizer: tok}}, openaitest.Config{})
	resp, body := h.post(t, "/retrieve", `{"query":"how much of my tuition is refunded if i withdraw in the second week?"}`)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var out retrieveResponse
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	sections := map[string]bool{}
	for _, c := range out.Chunks {
		if c.Section != "" {
			sections[c.Section] = true
		}
		if c.URL != tuitionURL && c.Section != "" {
			t.Errorf("a passage of %s links a section, %s, its page has none", c.URL, c.Section)
		}
	}
	if !sections[tuitionURL+"#refunds"] {
		t.Errorf("no passage links %s#refunds; sections %v, body %s", tuitionURL, sections, body)
	}
}
