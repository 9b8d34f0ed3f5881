package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/cache"
	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/compat/openaitest"
)

const (
	testAdminKey  = "adm-0123456789abcdef"
	testClientKey = "sk-client-0123456789"
)

// adminCall sends an admin request with key (none when empty) to the harness's server.
func adminCall(t *testing.T, h *harness, method, path, key, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, strings.TrimSuffix(h.URL, "/v1")+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func errorCode(t *testing.T, body string) string {
	t.Helper()
	var e struct {
		Error struct {
			Code *string `json:"code"`
			Type string  `json:"type"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Type == "" {
		t.Fatalf("not an OpenAI error body: %s", body)
	}
	if e.Error.Code == nil {
		return ""
	}
	return *e.Error.Code
}

func TestAdminAuth(t *testing.T) {
	var calls atomic.Int64
	routes := []Route{
		{Method: http.MethodGet, Path: "/thing", Handle: func(context.Context, *Request) (any, error) {
			calls.Add(1)
			return map[string]string{"object": "thing"}, nil
		}},
		{Method: http.MethodPost, Path: "/broken", Handle: func(context.Context, *Request) (any, error) {
			return nil, compat.InvalidRequest("url", "", "no such page")
		}},
	}
	h := newHarness(t, harnessOpts{cfg: Config{APIKeys: []string{testClientKey}, AdminKeys: []string{"adm-other-key-000000", testAdminKey}, Admin: routes}})
	cases := []struct {
		name, method, path, key string
		status                  int
		code                    string
	}{
		{"no key", http.MethodGet, "/admin/thing", "", 401, "invalid_api_key"},
		{"wrong key", http.MethodGet, "/admin/thing", "adm-wrong-0123456789", 401, "invalid_api_key"},
		{"client key", http.MethodGet, "/admin/thing", testClientKey, 401, "invalid_api_key"},
		{"admin key", http.MethodGet, "/admin/thing", testAdminKey, 200, ""},
		{"unknown route", http.MethodGet, "/admin/nothing", testAdminKey, 404, "unknown_url"},
		{"unknown route without a key", http.MethodGet, "/admin/nothing", "", 401, "invalid_api_key"},
		{"handler error", http.MethodPost, "/admin/broken", testAdminKey, 400, ""},
		{"admin key on /v1", http.MethodGet, "/v1/models", testAdminKey, 401, "invalid_api_key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := adminCall(t, h, c.method, c.path, c.key, "")
			if status != c.status {
				t.Fatalf("status %d, want %d: %s", status, c.status, body)
			}
			if c.status == 200 {
				if body != `{"object":"thing"}` {
					t.Errorf("body %s", body)
				}
				return
			}
			if got := errorCode(t, body); got != c.code {
				t.Errorf("code %q, want %q: %s", got, c.code, body)
			}
		})
	}
	if calls.Load() != 1 {
		t.Errorf("the route ran %d times, want once (only with the admin key)", calls.Load())
	}

	off := newHarness(t, harnessOpts{cfg: Config{Admin: routes}})
	status, body := adminCall(t, off, http.MethodGet, "/admin/thing", testAdminKey, "")
	if status != http.StatusForbidden || errorCode(t, body) != "admin_disabled" {
		t.Errorf("without admin keys: %d %s, want 403 admin_disabled", status, body)
	}
}

// TestAdminRouteRequest checks what an admin handler receives (decoded path parameters, the query, the masked
// key), that a route's status is used, and that what the handler logs joins the line recording the action.
func TestAdminRouteRequest(t *testing.T) {
	var got []*Request
	var mu sync.Mutex
	record := func(_ context.Context, req *Request) (any, error) {
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		req.Log("page_url", req.Params["*"])
		return map[string]string{"object": "ok"}, nil
	}
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	routes := []Route{
		{Method: http.MethodGet, Path: "/pages/*", Handle: record},
		{Method: http.MethodPost, Path: "/jobs/:id/cancel", Handle: record, Status: http.StatusAccepted},
	}
	h := newHarness(t, harnessOpts{cfg: Config{AdminKeys: []string{testAdminKey}, Admin: routes, Logger: logger}})
	cases := []struct {
		method, path string
		status       int
		params       map[string]string
		query        url.Values
	}{
		{http.MethodGet, "/admin/pages/" + url.PathEscape("https://www.example.org/a b/?x=1"), 200,
			map[string]string{"*": "https://www.example.org/a b/?x=1"}, url.Values{}},
		{http.MethodGet, "/admin/pages/https://www.example.org/a/?limit=5&prefix=https%3A%2F%2Fx", 200,
			map[string]string{"*": "https://www.example.org/a/"}, url.Values{"limit": {"5"}, "prefix": {"https://x"}}},
		{http.MethodPost, "/admin/jobs/job-42/cancel", 202, map[string]string{"id": "job-42"}, url.Values{}},
	}
	for i, c := range cases {
		status, body := adminCall(t, h, c.method, c.path, testAdminKey, "")
		if status != c.status || body != `{"object":"ok"}` {
			t.Fatalf("%s %s: %d %s, want %d", c.method, c.path, status, body, c.status)
		}
		req := got[i]
		if diff := cmp.Diff(c.params, req.Params); diff != "" {
			t.Errorf("%s: params (-want +got):\n%s", c.path, diff)
		}
		if diff := cmp.Diff(c.query, req.Query); diff != "" {
			t.Errorf("%s: query (-want +got):\n%s", c.path, diff)
		}
		if req.Key != maskKey(testAdminKey) {
			t.Errorf("key %q, want the masked admin key", req.Key)
		}
	}
	logs.mu.Lock()
	logged := logs.buf.String()
	logs.mu.Unlock()
	if !strings.Contains(logged, `"msg":"admin action"`) || !strings.Contains(logged, `"page_url":"https://www.example.org/a b/?x=1"`) {
		t.Errorf("the action's log line lacks what the handler logged:\n%s", logged)
	}
}

// versionedGrounder passes every request through and reports an index version that the test changes.
type versionedGrounder struct{ version atomic.Value }

func (g *versionedGrounder) Ground(context.Context, *GroundRequest) (*Grounding, error) {
	return nil, nil
}
func (g *versionedGrounder) IndexVersion() string { return g.version.Load().(string) }

// TestVersionerKeysCacheAndReadyz checks that a Grounder's index version, which changes while serving, keys the
// response cache and is named by /readyz.
func TestVersionerKeysCacheAndReadyz(t *testing.T) {
	g := &versionedGrounder{}
	g.version.Store("v1")
	lru, err := cache.NewLRU(cache.LRUConfig{})
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessOpts{cfg: Config{Grounder: g, Cache: lru, IndexVersion: "ignored"}, fake: openaitest.Config{}})
	body := `{"temperature":0,` + cacheQuestion + `}`
	xcache := func() string {
		resp, _ := h.post(t, "/chat/completions", body)
		return resp.Header.Get("X-Cache")
	}
	if a, b := xcache(), xcache(); a != "MISS" || b != "HIT" {
		t.Fatalf("v1: x-cache %q then %q, want MISS then HIT", a, b)
	}
	readyz := func() string {
		status, body := adminCall(t, h, http.MethodGet, "/readyz", "", "")
		if status != 200 {
			t.Fatalf("readyz: %d %s", status, body)
		}
		return body
	}
	if got := readyz(); got != `{"index_version":"v1","status":"ready"}` {
		t.Errorf("readyz = %s", got)
	}
	g.version.Store("v2")
	if a := xcache(); a != "MISS" {
		t.Errorf("after the version changed: x-cache %q, want MISS", a)
	}
	if got := readyz(); !strings.Contains(got, `"index_version":"v2"`) {
		t.Errorf("readyz = %s", got)
	}
}
