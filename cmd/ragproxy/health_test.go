package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/internal/redistest"
	"github.com/ragproxy/ragproxy/observability"
	"github.com/ragproxy/ragproxy/retrieval/qdrant/qdranttest"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/upstream"
)

// TestReadyzBackendDown serves /readyz with the probes serve builds from its flags: ready while Qdrant answers
// and only the Redis cache (on a closed port) is down, 503 naming Qdrant once its server has stopped, while
// /healthz stays 200; `ragproxy health` follows /readyz.
func TestReadyzBackendDown(t *testing.T) {
	ctx := context.Background()
	metrics, err := observability.New(observability.Config{NoRuntimeMetrics: true})
	if err != nil {
		t.Fatal(err)
	}
	redis, err := cache.NewRedis(cache.RedisConfig{URL: fmt.Sprintf("redis://127.0.0.1:%d/0", redistest.FreePort(t))})
	if err != nil {
		t.Fatal(err)
	}
	defer redis.Close()
	f := serveFlags{index: t.TempDir()}
	var qdrantURL string
	t.Run("qdrant up", func(t *testing.T) {
		_, qdrantURL = qdranttest.NewServer(t) // stopped when this subtest ends
		f.backends.QdrantURL = qdrantURL
		ready, closeReady, err := f.readiness(ctx, redis, metrics)
		if err != nil {
			t.Fatal(err)
		}
		defer closeReady()
		rep := ready.Check(ctx)
		if !rep.Ready || rep.Backends["qdrant"].Status != "up" || rep.Backends["redis"].Status != "down" {
			t.Errorf("qdrant up, redis down: %+v, want ready with redis reported down", rep)
		}
	})

	ready, closeReady, err := f.readiness(ctx, redis, metrics)
	if err != nil {
		t.Fatal(err)
	}
	defer closeReady()
	client, err := upstream.New(upstream.Config{Primary: upstream.Endpoint{Name: "primary", BaseURL: defaultUpstreamURL}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- server.New(server.Config{Ready: ready}, client).Serve(sctx, ln) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	base := "http://" + ln.Addr().String()
	err = checkHealth(ctx, base+"/readyz", 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "qdrant: ") {
		t.Errorf("health with qdrant stopped: %v, want a 503 naming qdrant", err)
	}
	if err := checkHealth(ctx, base+"/healthz", 5*time.Second); err != nil {
		t.Errorf("health --path /healthz with qdrant stopped: %v, want nil (liveness only)", err)
	}
}

// TestHealthURL checks the address the image's healthcheck asks for each form of --listen.
func TestHealthURL(t *testing.T) {
	for listen, want := range map[string]string{
		":8080":          "http://127.0.0.1:8080/readyz",
		"0.0.0.0:9000":   "http://127.0.0.1:9000/readyz",
		"[::]:8080":      "http://127.0.0.1:8080/readyz",
		"127.0.0.1:8080": "http://127.0.0.1:8080/readyz",
		"10.0.0.7:80":    "http://10.0.0.7:80/readyz",
		"[::1]:8080":     "http://[::1]:8080/readyz",
	} {
		if got := healthURL(listen, "/readyz"); got != want {
			t.Errorf("healthURL(%q) = %q, want %q", listen, got, want)
		}
	}
}

// TestSplitDemoArgs checks that demo keeps its own flags and hands serve's to serve with their values, in
// every form the flag package accepts.
func TestSplitDemoArgs(t *testing.T) {
	tests := []struct {
		args       []string
		own, serve []string
	}{
		{[]string{"--log-level", "warn"}, nil, []string{"--log-level", "warn"}},
		{[]string{"--log-level=warn", "--listen", ":9000"}, []string{"--listen", ":9000"}, []string{"--log-level=warn"}},
		{[]string{"--rebuild", "--no-cache", "-index", "/tmp/x"}, []string{"--rebuild", "-index", "/tmp/x"}, []string{"--no-cache"}},
		{[]string{"--source-events", "--keep-pages", "4"}, nil, []string{"--source-events", "--keep-pages", "4"}},
		{[]string{"--rebuild=false", "stray"}, []string{"--rebuild=false"}, []string{"stray"}},
	}
	for _, tt := range tests {
		fs := flag.NewFlagSet("demo", flag.ContinueOnError)
		fs.String("index", "", "")
		fs.String("listen", "", "")
		fs.Bool("rebuild", false, "")
		own, serve := splitDemoArgs(fs, tt.args)
		if !slices.Equal(own, tt.own) || !slices.Equal(serve, tt.serve) {
			t.Errorf("splitDemoArgs(%q) = %q, %q; want %q, %q", tt.args, own, serve, tt.own, tt.serve)
		}
	}
}
