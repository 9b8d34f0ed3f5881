package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/ragproxy/ragproxy/server"
)

// runHealth asks a running server's /readyz (or another path) and exits 1 unless it answers 200: the
// container image's HEALTHCHECK, since distroless images hold no curl or shell. Docker reads exit status 1 as
// unhealthy and reserves 2, which every other subcommand's error gives, so a failed check exits here.
func runHealth(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	url := fs.String("url", "", "URL to ask; default http://ADDRESS/readyz for the address serve listens on (RAGPROXY_LISTEN)")
	path := fs.String("path", "/readyz", "path asked when --url is not set: /readyz (backends answer) or /healthz (the process is alive)")
	timeout := fs.Duration("timeout", 3*time.Second, "longest wait for the answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("health: unexpected arguments %q", fs.Args())
	}
	if *url == "" {
		*url = server.HealthURL(envOr("RAGPROXY_LISTEN", "127.0.0.1:8080"), *path)
	}
	if err := server.CheckHealth(ctx, *url, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "ragproxy health:", err)
		os.Exit(1)
	}
	return nil
}
