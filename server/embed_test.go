package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestCheckEmbedOrigin(t *testing.T) {
	for _, tc := range []struct {
		origin string
		ok     bool
	}{
		{"https://www.example.org", true},
		{"http://127.0.0.1:8000", true},
		{"*", false},
		{"www.example.org", false},
		{"https://www.example.org/", true},
		{"https://www.example.org/news/", false},
		{"javascript:alert(1)", false},
	} {
		if err := CheckEmbedOrigin(tc.origin); (err == nil) != tc.ok {
			t.Errorf("CheckEmbedOrigin(%q) = %v, want ok %v", tc.origin, err, tc.ok)
		}
	}
	got := EmbedOrigins([]string{" https://a.example/ ", "*", "nope", "http://b.example:81"})
	if strings.Join(got, " ") != "https://a.example http://b.example:81" {
		t.Errorf("EmbedOrigins = %q", got)
	}
}

// TestPublishableKey checks what a widget's key opens: chat, from an embed origin or the server's own page,
// within a visitor's rate; never another route, another site or a request without an Origin.
func TestPublishableKey(t *testing.T) {
	const (
		site   = "https://www.example.org"
		pk     = "pk_widget_0123456789"
		secret = "sk-secret-0123456789"
		ask    = `{"messages":[{"role":"user","content":"hi"}]}`
	)
	h := newHarness(t, harnessOpts{cfg: Config{APIKeys: []string{secret}, AdminKeys: []string{"sk-admin-000000"},
		Embed: Embed{Origins: []string{site}, Keys: []string{pk}, RequestsPerMinute: 3}}})
	own := "http://" + strings.TrimSuffix(strings.TrimPrefix(h.URL, "http://"), "/v1")
	do := func(method, path, origin, key string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, h.URL+path, strings.NewReader(ask))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b)
	}
	for _, tc := range []struct {
		name, method, path, origin, key string
		status                          int
		code                            string
	}{
		{"chat from the site", http.MethodPost, "/chat/completions", site, pk, 200, ""},
		{"chat from the framed chat page", http.MethodPost, "/chat/completions", own, pk, 200, ""},
		{"another site", http.MethodPost, "/chat/completions", "https://evil.example", pk, 403, "publishable_key_origin"},
		{"no Origin (not a browser)", http.MethodPost, "/chat/completions", "", pk, 403, "publishable_key_origin"},
		{"models", http.MethodGet, "/models", site, pk, 403, "publishable_key_scope"},
		{"retrieve", http.MethodPost, "/retrieve", site, pk, 403, "publishable_key_scope"},
		{"admin", http.MethodGet, "/../admin/index", site, pk, 401, "invalid_api_key"},
		{"secret key from anywhere", http.MethodGet, "/models", "", secret, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if strings.HasPrefix(path, "/../") {
				// Outside /v1: the harness's URL ends in /v1.
				req, _ := http.NewRequest(tc.method, strings.TrimSuffix(h.URL, "/v1")+path[3:], nil)
				req.Header.Set("Authorization", "Bearer "+tc.key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != tc.status {
					t.Errorf("%s %s = %d, want %d", tc.method, path, resp.StatusCode, tc.status)
				}
				return
			}
			resp, body := do(tc.method, path, tc.origin, tc.key)
			if resp.StatusCode != tc.status || (tc.code != "" && !strings.Contains(body, `"code":"`+tc.code+`"`)) {
				t.Errorf("%s %s from %q = %d %s, want %d %s", tc.method, path, tc.origin, resp.StatusCode, body, tc.status, tc.code)
			}
		})
	}
	// Two chats above took two of the visitor's three requests a minute.
	if resp, body := do(http.MethodPost, "/chat/completions", site, pk); resp.StatusCode != 200 {
		t.Fatalf("third chat: %d %s", resp.StatusCode, body)
	}
	resp, body := do(http.MethodPost, "/chat/completions", site, pk)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(body, `"code":"rate_limit_exceeded"`) {
		t.Errorf("fourth chat of a visitor in a minute: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	// The secret key is a client of its own, not held to the widget's visitor rate.
	if resp, body := do(http.MethodPost, "/chat/completions", "", secret); resp.StatusCode != 200 {
		t.Errorf("the secret key was limited with the widget's visitors: %d %s", resp.StatusCode, body)
	}
}

// TestEmbedCORS checks that an embed origin may call the API from the browser without being in CORSOrigins.
func TestEmbedCORS(t *testing.T) {
	const site = "https://www.example.org"
	h := newHarness(t, harnessOpts{cfg: Config{Embed: Embed{Origins: []string{site}}}})
	for origin, want := range map[string]string{site: site, "https://evil.example": ""} {
		req, _ := http.NewRequest(http.MethodOptions, h.URL+"/chat/completions", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,x-ragproxy-page")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != want {
			t.Errorf("preflight from %s: Access-Control-Allow-Origin %q, want %q", origin, got, want)
		}
	}
}
