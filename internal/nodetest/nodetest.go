// Package nodetest runs the clients' own code from npm (the project's clients/ directory) in Go tests. A test that
// uses it runs only when its switch variable is "1", since it needs node and `npm ci` in clients.
package nodetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Dir returns the clients directory, seen from a package one level below the repository's root. It skips tb
// unless the environment variable gate is "1", and fails it when the npm package pkg is not installed there.
func Dir(tb testing.TB, gate, pkg string) string {
	tb.Helper()
	if os.Getenv(gate) != "1" {
		tb.Skipf("set %s=1 (after npm ci in clients) to run this test", gate)
	}
	dir, err := filepath.Abs(filepath.Join("..", "clients"))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg))); err != nil {
		tb.Fatalf("npm dependencies missing: run npm ci in %s: %v", dir, err)
	}
	return dir
}

// Run runs node with args in dir, with env added to the environment, for at most timeout; it logs the output and
// fails tb when node fails.
func Run(tb testing.TB, dir string, timeout time.Duration, env []string, args ...string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	name := strings.Join(args, " ")
	tb.Logf("node %s:\n%s", name, out)
	if err != nil {
		tb.Fatalf("node %s failed: %v", name, err)
	}
}
