package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/observability"
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
		*url = healthURL(envOr("RAGPROXY_LISTEN", "127.0.0.1:8080"), *path)
	}
	if err := checkHealth(ctx, *url, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "ragproxy health:", err)
		os.Exit(1)
	}
	return nil
}

// healthURL is the URL of path on the server listening on listen, asked over loopback when it listens on every
// address (":8080", "0.0.0.0:8080", "[::]:8080").
func healthURL(listen, path string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		host, port = listen, "8080"
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + path
}

// checkHealth returns nil when url answers 200 within timeout, else an error with the status and the start of
// the body (the backends /readyz names as down).
func checkHealth(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// readiness builds what /readyz probes: with an index, Qdrant and Neo4j when configured (the answers need them:
// their searches and communities fail while they are down), and Redis when it is the cache (reported only: a
// cache that is down makes requests uncached). It opens connections of its own, since a reload closes the
// backends of the version it replaces, and each probe's outcome goes to the ragproxy_backend_up gauge. The
// returned func closes the connections.
func (f serveFlags) readiness(ctx context.Context, c cache.Cache, metrics *observability.Metrics) (*server.Readiness, func(), error) {
	var (
		probes   []server.Backend
		closeAll = func() {}
	)
	if f.index != "" {
		ps, closeProbes, err := f.backends.Probes(ctx, f.index)
		if err != nil {
			return nil, nil, fmt.Errorf("serve: %w", err)
		}
		closeAll = closeProbes
		for _, p := range ps {
			probes = append(probes, server.Backend{Name: p.Name, Required: true, Probe: p.Check})
		}
	}
	if r, ok := c.(*cache.Redis); ok {
		probes = append(probes, server.Backend{Name: "redis", Probe: r.Ping})
	}
	if len(probes) == 0 {
		return nil, closeAll, nil
	}
	return server.NewReadiness(server.ReadinessConfig{Backends: probes, OnProbe: metrics.BackendUp}), closeAll, nil
}
