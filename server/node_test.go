package server

import (
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/internal/nodetest"
)

// TestNodeSDK runs clients/sdk-passthrough.mjs, written as a client
// developer would with the official OpenAI Node SDK, against the proxy as a
// plain gateway and a fake upstream. It needs node and `npm ci` in clients,
// so it runs only when RAGPROXY_NODE_TEST=1 (the grounded answers' client
// checks are grounding's TestClients).
func TestNodeSDK(t *testing.T) {
	dir := nodetest.Dir(t, "RAGPROXY_NODE_TEST", "openai")
	h := newHarness(t, harnessOpts{cfg: Config{APIKeys: []string{"sk-node-test"}}})
	nodetest.Run(t, dir, 2*time.Minute, []string{"RAGPROXY_BASE_URL=" + h.URL, "RAGPROXY_API_KEY=sk-node-test"},
		"sdk-passthrough.mjs")
}
