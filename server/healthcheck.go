package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// HealthURL is the URL of path on the server listening on listen, asked over loopback when it listens on every
// address (":8080", "0.0.0.0:8080", "[::]:8080").
func HealthURL(listen, path string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		host, port = listen, "8080"
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + path
}

// CheckHealth returns nil when url answers 200 within timeout, else an error with the status and the start of
// the body (the backends /readyz names as down). It is the client side of /readyz and /healthz, for a container's
// healthcheck.
func CheckHealth(ctx context.Context, url string, timeout time.Duration) error {
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
