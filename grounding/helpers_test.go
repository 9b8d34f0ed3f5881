package grounding

import (
	"net/http"
	"testing"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/internal/gatewaytest"
	"github.com/ragproxy/ragproxy/server"
)

// harness is the gateway with a Grounder in front of a fake upstream, served on loopback.
type harness struct{ *gatewaytest.Harness }

func newHarness(t testing.TB, cfg server.Config, fake openaitest.Config) *harness {
	t.Helper()
	return &harness{gatewaytest.Start(t, cfg, fake)}
}

func (h *harness) post(t testing.TB, path, body string, header ...string) (*http.Response, string) {
	t.Helper()
	return h.Post(t, path, body, header...)
}

// replying is a fake upstream that answers every request with content.
func replying(content string) openaitest.Config {
	return openaitest.Config{Reply: func(*openaitest.Request) openaitest.Reply { return openaitest.Reply{Content: content} }}
}
