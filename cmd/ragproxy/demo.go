package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest"
)

// runDemo indexes the bundled example site once and serves it: the quickest way to see ragproxy answer, with no
// key and no services. Flags it does not know go to serve.
func runDemo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	dir := fs.String("index", defaultDemoIndex(), "where the demo index is kept")
	listen := fs.String("listen", envOr("RAGPROXY_LISTEN", "127.0.0.1:8080"), "address to listen on (RAGPROXY_LISTEN)")
	rebuild := fs.Bool("rebuild", false, "rebuild the demo index")
	own, rest := splitDemoArgs(fs, args)
	if err := fs.Parse(own); err != nil {
		return err
	}
	if err := ensureDemoIndex(ctx, *dir, *rebuild); err != nil {
		return err
	}
	// The example FAQ answers its questions directly; it sits beside the index.
	faqFile := filepath.Clean(*dir) + ".faq.yaml"
	if err := os.WriteFile(faqFile, examples.FAQ, 0o644); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintf(os.Stderr, "demo: serving the Lakeshore Polytechnic example site at http://%s/v1 as model \"lakeshore\"\n", *listen)
	fmt.Fprintf(os.Stderr, "demo: chat with it in a browser at http://%s/\n", *listen)
	return runServe(ctx, append([]string{"--index", *dir, "--listen", *listen, "--name", "lakeshore", "--site-name", "Lakeshore Polytechnic",
		"--faq", faqFile}, append(rest, fs.Args()...)...))
}

// splitDemoArgs separates the flags fs defines from the others, which go to serve with their values: a flag of
// serve's written "--log-level warn" takes the next argument as its value unless that is a flag itself (demo
// takes no arguments, and serve refuses a stray one as it would without demo).
func splitDemoArgs(fs *flag.FlagSet, args []string) (own, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch {
		case a == "--" || !strings.HasPrefix(a, "-"):
			return own, append(rest, args[i:]...)
		case fs.Lookup(name) != nil:
			own = append(own, a)
			if _, isBool := fs.Lookup(name).Value.(interface{ IsBoolFlag() bool }); !hasValue && !isBool && i+1 < len(args) {
				i++
				own = append(own, args[i])
			}
		default:
			rest = append(rest, a)
			if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				rest = append(rest, args[i])
			}
		}
	}
	return own, rest
}

func defaultDemoIndex() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "ragproxy", "demo-index")
	}
	return filepath.Join(os.TempDir(), "ragproxy-demo-index")
}

// ensureDemoIndex ingests the bundled site into dir unless an index built by this version is already there.
func ensureDemoIndex(ctx context.Context, dir string, rebuild bool) error {
	if m, err := index.LoadManifest(dir); err == nil && !rebuild && m.RagproxyVersion == version && m.Source == examples.BaseURL {
		return nil
	} else if err != nil && !errors.Is(err, index.ErrNoIndex) {
		fmt.Fprintf(os.Stderr, "demo: rebuilding the index: %v\n", err)
	}
	site, err := os.MkdirTemp("", "ragproxy-demo-site-")
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer os.RemoveAll(site)
	sub, err := fs.Sub(examples.Site, "site")
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := os.CopyFS(site, sub); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	rep, err := ingest.Run(ctx, ingest.Config{Source: site, BaseURL: examples.BaseURL, IndexDir: dir, Full: rebuild,
		Version: version, Logger: newLogger(os.Stderr, "warn")})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	fmt.Fprintf(os.Stderr, "demo: indexed %d pages, %d chunks into %s\n", rep.Pages, rep.Chunks, dir)
	return nil
}
