package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestNodeSDK runs clients/sdk-passthrough.mjs, written as a client
// developer would with the official OpenAI Node SDK, against the proxy as a
// plain gateway and a fake upstream. It needs node and `npm ci` in clients,
// so it runs only when RAGPROXY_NODE_TEST=1 (the grounded answers' client
// checks are grounding's TestClients).
func TestNodeSDK(t *testing.T) {
	if os.Getenv("RAGPROXY_NODE_TEST") != "1" {
		t.Skip("set RAGPROXY_NODE_TEST=1 (after npm ci in clients) to run the Node SDK test")
	}
	dir, err := filepath.Abs(filepath.Join("..", "clients"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai")); err != nil {
		t.Fatalf("npm dependencies missing: run npm ci in %s: %v", dir, err)
	}
	h := newHarness(t, harnessOpts{cfg: Config{APIKeys: []string{"sk-node-test"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "sdk-passthrough.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RAGPROXY_BASE_URL="+h.URL, "RAGPROXY_API_KEY=sk-node-test")
	out, err := cmd.CombinedOutput()
	t.Logf("node output:\n%s", out)
	if err != nil {
		t.Fatalf("node sdk-passthrough.mjs failed: %v", err)
	}
}
