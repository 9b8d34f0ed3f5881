package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestCORS(t *testing.T) {
	const page = "http://localhost:3000"
	h := newHarness(t, harnessOpts{cfg: Config{APIKeys: []string{"sk-browser"}, CORSOrigins: []string{page, "not an origin"}}})
	do := func(method, path, origin string, header ...string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(method, h.URL+path, strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", origin)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	// A browser's preflight comes without the key; it must not meet client auth.
	resp := do(http.MethodOptions, "/chat/completions", page, "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "authorization,content-type,accept")
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != page ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "authorization") {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	resp = do(http.MethodGet, "/models", page, "Authorization", "Bearer sk-browser")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != page ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "X-Request-Id") {
		t.Errorf("GET /models from the page: %d %v", resp.StatusCode, resp.Header)
	}
	resp = do(http.MethodPost, "/chat/completions", page)
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Access-Control-Allow-Origin") != page {
		t.Errorf("a refused request must still be readable by the page (its error body): %d %v", resp.StatusCode, resp.Header)
	}
	resp = do(http.MethodOptions, "/chat/completions", "https://elsewhere.example", "Access-Control-Request-Method", "POST")
	if got := resp.Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Errorf("an origin not configured got Access-Control-Allow-Origin %q", got)
	}

	plain := newHarness(t, harnessOpts{})
	req, _ := http.NewRequest(http.MethodOptions, plain.URL+"/chat/completions", nil)
	req.Header.Set("Origin", page)
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.StatusCode < 400 {
		t.Errorf("without --cors-origins a preflight must fail: %d %v", resp.StatusCode, resp.Header)
	}
}

func TestCheckOrigin(t *testing.T) {
	for o, ok := range map[string]bool{"*": true, "https://chat.example.org": true, "http://localhost:3000": true,
		"chat.example.org": false, "https://chat.example.org/path": false, "ftp://x": false, "": false} {
		if got := CheckOrigin(o) == nil; got != ok {
			t.Errorf("CheckOrigin(%q) ok = %v, want %v", o, got, ok)
		}
	}
}

// TestJSONBodyRequired checks that bodies a browser could send across origins without a preflight are refused.
func TestJSONBodyRequired(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	body := `{"messages":[{"role":"user","content":"hi"}]}`
	for ct, want := range map[string]int{"application/json": 200, "application/json; charset=utf-8": 200, "": 200,
		// fasthttp reads a multipart body before any handler, and refuses this one itself.
		"text/plain": 415, "application/x-www-form-urlencoded": 415, "multipart/form-data; boundary=x": 400} {
		req, err := http.NewRequest(http.MethodPost, h.URL+"/chat/completions", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || want >= 400 && !strings.Contains(string(b), `"type":"invalid_request_error"`) {
			t.Errorf("Content-Type %q: %d %s, want %d", ct, resp.StatusCode, b, want)
		}
	}
}
