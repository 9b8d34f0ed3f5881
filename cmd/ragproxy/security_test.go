package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/ragproxy/ragproxy/examples"
)

// TestAdminJobCannotTakeTheServersKey checks that an admin key cannot point a job at its own upstream: the job
// is refused with invalid_option, and an attacker's upstream on loopback receives nothing, least of all the
// server's OPENAI_API_KEY.
func TestAdminJobCannotTakeTheServersKey(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []string
	)
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, "no", http.StatusTeapot)
	}))
	defer attacker.Close()
	// Mirrors are allowed (under the temporary directory), so that only the options decide.
	s := startServe(t, "--admin-mirror-root", os.TempDir())
	t.Setenv("OPENAI_API_KEY", "sk-the-servers-own-secret") // what a job would read when it parses its options
	for _, opts := range []string{
		fmt.Sprintf(`{"upstream-url":%q,"summaries":"llm"}`, attacker.URL+"/v1"),
		fmt.Sprintf(`{"upstream-url":%q,"embedder":"openai"}`, attacker.URL+"/v1"),
		fmt.Sprintf(`{"qdrant-url":%q}`, attacker.URL),
		fmt.Sprintf(`{"neo4j-uri":%q}`, "bolt://"+strings.TrimPrefix(attacker.URL, "http://")),
	} {
		body := fmt.Sprintf(`{"source":%q,"options":%s}`, s.site, strings.Replace(opts, "{", fmt.Sprintf(`{"base-url":%q,`, examples.BaseURL), 1))
		status, out, err := s.call(http.MethodPost, "/admin/ingest", testAdminKey, body)
		if err != nil || status != http.StatusBadRequest || !strings.Contains(out, `"code":"invalid_option"`) {
			t.Errorf("job with %s: %d %s %v, want 400 invalid_option", opts, status, out, err)
		}
	}
	if status, out, _ := s.call(http.MethodGet, "/admin/jobs", testAdminKey, ""); status != http.StatusOK || !strings.Contains(out, `"data":[]`) {
		t.Errorf("jobs after refusals: %d %s, want none", status, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) > 0 {
		t.Errorf("the attacker's upstream received %d requests: %q", len(seen), seen)
	}
}

// TestAdminJobPrivateAddressesNeedTheFlag checks serve's wiring of the job policy: a job that asks to crawl
// private addresses is refused unless serve runs with --allow-private-ingest, and a directory source is refused
// without --admin-mirror-root.
func TestAdminJobPrivateAddressesNeedTheFlag(t *testing.T) {
	intranet := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("a job reached the intranet: %s", r.URL)
	}))
	defer intranet.Close()
	s := startServe(t)
	for _, body := range []string{
		fmt.Sprintf(`{"source":%q,"options":{"allow-private":true,"no-sitemaps":true}}`, intranet.URL+"/"),
		fmt.Sprintf(`{"source":%q,"options":{"base-url":%q}}`, s.site, examples.BaseURL),
	} {
		status, out, err := s.call(http.MethodPost, "/admin/ingest", testAdminKey, body)
		if err != nil || status != http.StatusBadRequest || !strings.Contains(out, `"code":"invalid_option"`) {
			t.Errorf("%s: %d %s %v, want 400 invalid_option", body, status, out, err)
		}
	}
}

// TestEmptyKeyListsRefuseToStart checks that a key list set to nothing but separators stops start-up instead of
// turning client auth off or leaving the admin API without keys.
func TestEmptyKeyListsRefuseToStart(t *testing.T) {
	noBackendsEnv(t)
	for _, c := range []struct{ env, value, name string }{
		{"RAGPROXY_API_KEYS", ", ,", "RAGPROXY_API_KEYS"},
		{"RAGPROXY_API_KEYS", " ", ""},
		{"RAGPROXY_ADMIN_KEYS", ",", "RAGPROXY_ADMIN_KEYS"},
	} {
		t.Run(c.env+"="+c.value, func(t *testing.T) {
			t.Setenv("RAGPROXY_API_KEYS", "")
			t.Setenv("RAGPROXY_ADMIN_KEYS", "")
			t.Setenv(c.env, c.value)
			if c.name == "" {
				if _, err := parseServeFlags(nil); err != nil {
					t.Errorf("a blank list is an unset one: %v", err)
				}
				return
			}
			// Cancelled: a serve that started anyway ends at once instead of serving.
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			err := run(ctx, []string{"serve", "--listen", "127.0.0.1:0"})
			if err == nil || !strings.Contains(err.Error(), c.name) || !strings.Contains(err.Error(), "names no key") {
				t.Errorf("serve with %s=%q: %v, want a refusal naming it", c.env, c.value, err)
			}
		})
	}
}

// TestMetricsListen checks that --metrics-listen takes /metrics off the API's address to one of its own.
func TestMetricsListen(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := startServe(t, "--metrics-listen", addr)
	if status, _, err := s.call(http.MethodGet, "/metrics", "", ""); err != nil || status != http.StatusNotFound {
		t.Errorf("/metrics on the API's address: %d %v, want 404", status, err)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/metrics on --metrics-listen: %d", resp.StatusCode)
	}
}
