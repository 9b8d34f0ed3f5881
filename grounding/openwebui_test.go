package grounding

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/server"
)

// TestOpenWebUINonStreamSources checks that a non-stream answer to Open WebUI (its X-OpenWebUI-* headers) carries
// the cited pages as Open WebUI's own top-level "sources", the data of its source events, for a model's answer
// and for one ragproxy writes itself, and that no other client gets the field, not even with source events on
// for every client.
func TestOpenWebUINonStreamSources(t *testing.T) {
	r, tok := exampleIndex(t)
	const question = `{"model":"ragproxy","messages":[{"role":"user","content":"how much is in-state tuition per semester?"}]}`
	type source struct {
		Source   struct{ Name, ID, URL string }
		Document []string
		Metadata []struct{ Source, Name, URL string }
	}
	for _, tc := range []struct {
		name string
		g    *Grounder
	}{
		{"model", &Grounder{Retriever: r, Tokenizer: tok}},
		{"offline", &Grounder{Retriever: r, Tokenizer: tok, Offline: true}},
		{"source events for all", &Grounder{Retriever: r, Tokenizer: tok, SourceEvents: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, server.Config{Grounder: tc.g}, openaitest.Config{Reply: func(*openaitest.Request) openaitest.Reply {
				return openaitest.Reply{Content: "It is $4,850 ([tuition](" + tuitionURL + "))."}
			}})
			for _, owui := range []bool{true, false} {
				var header []string
				if owui {
					header = []string{"X-OpenWebUI-Chat-Id", "c1", "X-OpenWebUI-User-Id", "u1"}
				}
				_, body := h.post(t, "/chat/completions", question, header...)
				var out struct {
					Sources []source
					Choices []struct{ Message struct{ Content string } }
				}
				var fields map[string]json.RawMessage
				if err := json.Unmarshal([]byte(body), &out); err != nil || json.Unmarshal([]byte(body), &fields) != nil {
					t.Fatalf("body %s: %v", body, err)
				}
				_, has := fields["sources"]
				if !owui {
					if has {
						t.Errorf("a client other than Open WebUI got sources: %s", fields["sources"])
					}
					continue
				}
				if len(out.Sources) == 0 {
					t.Fatalf("Open WebUI got no sources: %s", body)
				}
				s := out.Sources[0]
				if s.Source.URL != tuitionURL || s.Source.Name != "Tuition and Fees" || len(s.Document) == 0 || len(s.Document) != len(s.Metadata) {
					t.Errorf("first source %+v, want the tuition page with its passages", s)
				}
				var urls []string
				for _, m := range s.Metadata {
					urls = append(urls, m.URL)
				}
				want := make([]string, len(urls))
				for i := range want {
					want[i] = tuitionURL
				}
				if diff := cmp.Diff(want, urls); diff != "" {
					t.Errorf("metadata URLs (-want +got):\n%s", diff)
				}
			}
		})
	}
}
