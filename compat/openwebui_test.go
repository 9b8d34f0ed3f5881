package compat

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSetOpenWebUISources(t *testing.T) {
	body := `{"id":"chatcmpl-1","choices":[{"index":0,"message":{"role":"assistant","content":"x"}}]}`
	event := `{"choices":[],"event":{"type":"source","data":{"source":{"name":"A","id":"https://a/","url":"https://a/"},"document":["p"],"metadata":[{"source":"https://a/","name":"A","url":"https://a/"}]}}}`
	for _, tc := range []struct {
		name   string
		events []string
		want   string
	}{
		{"source events", []string{event, `{"event":{"type":"status","data":{}}}`},
			`{"id":"chatcmpl-1","choices":[{"index":0,"message":{"role":"assistant","content":"x"}}],"sources":[{"source":{"name":"A","id":"https://a/","url":"https://a/"},"document":["p"],"metadata":[{"source":"https://a/","name":"A","url":"https://a/"}]}]}`},
		{"none", nil, body},
		{"no source event", []string{`{"event":{"type":"status","data":{}}}`}, body},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var evs []json.RawMessage
			for _, e := range tc.events {
				evs = append(evs, json.RawMessage(e))
			}
			got, err := SetOpenWebUISources([]byte(body), evs)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}
