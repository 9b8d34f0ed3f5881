package serve

import (
	"context"
	"fmt"
	"net"
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

// TestReadyzBackendDown serves /readyz with the probes Readiness builds: ready while Qdrant answers
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
	c := Config{Index: t.TempDir()}
	var qdrantURL string
	t.Run("qdrant up", func(t *testing.T) {
		_, qdrantURL = qdranttest.NewServer(t) // stopped when this subtest ends
		c.Backends.QdrantURL = qdrantURL
		ready, closeReady, err := Readiness(ctx, c, redis, metrics)
		if err != nil {
			t.Fatal(err)
		}
		defer closeReady()
		rep := ready.Check(ctx)
		if !rep.Ready || rep.Backends["qdrant"].Status != "up" || rep.Backends["redis"].Status != "down" {
			t.Errorf("qdrant up, redis down: %+v, want ready with redis reported down", rep)
		}
	})

	ready, closeReady, err := Readiness(ctx, c, redis, metrics)
	if err != nil {
		t.Fatal(err)
	}
	defer closeReady()
	client, err := upstream.New(upstream.Config{Primary: upstream.Endpoint{Name: "primary", BaseURL: "https://api.openai.com/v1"}})
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
	err = server.CheckHealth(ctx, base+"/readyz", 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "qdrant: ") {
		t.Errorf("health with qdrant stopped: %v, want a 503 naming qdrant", err)
	}
	if err := server.CheckHealth(ctx, base+"/healthz", 5*time.Second); err != nil {
		t.Errorf("health --path /healthz with qdrant stopped: %v, want nil (liveness only)", err)
	}
}
