package deploy

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestReleaseBuildKeepsMethodsOut checks what keeps the release binary small: the image builds with the
// grpcnotrace tag, and no package it links executes an html/template. The linker keeps every exported method of
// every type once a reachable function may call a method by a name known only at run time, as a template's
// {{.Name}} does; golang.org/x/net/trace (gRPC's request tracing) and a page rendered with html/template each
// did, and together they made the binary 80 MB instead of 50 (stripped). Bleve's search engine (its registry,
// which its analysis packages register with) is kept out too: textnorm embeds the Snowball stopword lists Bleve
// carries instead of importing them, which took the binary from 86 MB back to 54.
func TestReleaseBuildKeepsMethodsOut(t *testing.T) {
	dockerfile, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	build := regexp.MustCompile(`go build [^\n]*\./cmd/ragproxy`).Find(dockerfile)
	if build == nil || !strings.Contains(string(build), "-tags grpcnotrace") || !strings.Contains(string(build), "-trimpath") ||
		!strings.Contains(string(build), "-s -w") {
		t.Errorf("the Dockerfile's build line %q lacks -trimpath, -tags grpcnotrace or -ldflags \"-s -w\"", build)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "go build -trimpath -tags grpcnotrace -ldflags \"-s -w") {
		t.Error("README's build line lacks -trimpath -tags grpcnotrace -ldflags \"-s -w ...\"")
	}
	out, err := exec.Command("go", "list", "-deps", "-tags", "grpcnotrace", "../cmd/ragproxy").CombinedOutput()
	if err != nil {
		t.Skipf("go list: %v\n%s", err, out)
	}
	deps := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		deps[p] = true
	}
	if !deps["github.com/ragproxy/ragproxy/webui"] {
		t.Fatalf("go list -deps ../cmd/ragproxy does not list the chat page; the check no longer sees the binary's packages:\n%s", out)
	}
	for _, p := range []string{"html/template", "golang.org/x/net/trace", "github.com/blevesearch/bleve/v2/registry"} {
		if deps[p] {
			t.Errorf("the release binary links %s: find what imports it (go list -deps -f '{{.ImportPath}} {{.Imports}}' ./cmd/ragproxy) and keep it out", p)
		}
	}
}
