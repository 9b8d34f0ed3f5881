package webui

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/grounding"
)

func get(t *testing.T, h http.Handler, method, path string, header ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Result()
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPage(t *testing.T) {
	p, err := New(Config{Site: `Lakeshore <script>alert(1)</script> Poly`, Model: "lakeshore", AuthRequired: true})
	if err != nil {
		t.Fatal(err)
	}
	resp := get(t, p, http.MethodGet, "/", "Accept-Encoding", "gzip, br")
	page := body(t, resp)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "gzip" ||
		resp.Header.Get("Content-Security-Policy") != ContentSecurityPolicy || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET /: %d %v", resp.StatusCode, resp.Header)
	}
	if strings.Contains(page, "<script>alert") || !strings.Contains(page, "Lakeshore &lt;script&gt;") {
		t.Errorf("the site name is not escaped in the page:\n%s", page)
	}
	if !strings.Contains(page, `data-auth="required"`) || !strings.Contains(page, `data-model="lakeshore"`) {
		t.Errorf("the page does not carry its settings:\n%s", page)
	}
	for _, asset := range []string{"/assets/app.js", "/assets/app.css", "/assets/vendor/marked.umd.js", "/assets/vendor/purify.min.js"} {
		if !strings.Contains(page, asset+"?v=") {
			t.Errorf("the page does not load %s with a version", asset)
		}
		resp := get(t, p, http.MethodGet, asset)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "" || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s without gzip: %d %v", asset, resp.StatusCode, resp.Header)
		}
		plain := body(t, resp)
		zipped := get(t, p, http.MethodGet, asset, "Accept-Encoding", "gzip")
		if got := body(t, zipped); got != plain || zipped.Header.Get("Content-Encoding") != "gzip" {
			t.Errorf("GET %s gzipped differs from plain", asset)
		}
		if etag := resp.Header.Get("ETag"); get(t, p, http.MethodGet, asset, "If-None-Match", etag).StatusCode != http.StatusNotModified {
			t.Errorf("GET %s with its ETag is not 304", asset)
		}
	}
	for _, tc := range []struct {
		method, path string
		status       int
	}{{http.MethodGet, "/assets/nope.js", 404}, {http.MethodGet, "/assets/index.html", 404}, {http.MethodPost, "/", 405}} {
		if got := get(t, p, tc.method, tc.path).StatusCode; got != tc.status {
			t.Errorf("%s %s = %d, want %d", tc.method, tc.path, got, tc.status)
		}
	}
	if lic := body(t, get(t, p, http.MethodGet, "/assets/vendor/marked.LICENSE")); !strings.Contains(lic, "MIT") {
		t.Errorf("the vendored libraries' licences are not served with them")
	}
}

func TestGatewayPage(t *testing.T) {
	p, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	page := body(t, get(t, p, http.MethodGet, "/"))
	if !strings.Contains(page, "/v1/chat/completions") || strings.Contains(page, "app.js") {
		t.Errorf("a gateway without an index should point at /v1 and load no chat:\n%s", page)
	}
}

// BenchmarkPage measures what a browser downloads for the page (page-gz-bytes: the page and every script and
// style sheet it loads, gzipped as served), for the widget (widget-gz-bytes: /widget.js, which every page of a
// site carrying it loads) and the cost of serving the page.
func BenchmarkPage(b *testing.B) {
	p, err := New(Config{Site: "Lakeshore Polytechnic", Model: "lakeshore"})
	if err != nil {
		b.Fatal(err)
	}
	raw, gz := p.Size()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	var sink bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		w.Body = &sink
		p.ServeHTTP(w, req)
		sink.Reset()
	}
	b.ReportMetric(float64(raw), "page-bytes")
	b.ReportMetric(float64(gz), "page-gz-bytes")
	w, err := New(Config{Site: "Lakeshore Polytechnic", Model: "lakeshore", EmbedOrigins: []string{"https://www.example.org"}})
	if err != nil {
		b.Fatal(err)
	}
	raw, gz = w.WidgetSize()
	b.ReportMetric(float64(raw), "widget-bytes")
	b.ReportMetric(float64(gz), "widget-gz-bytes")
}

func TestEmbed(t *testing.T) {
	origins := []string{"https://www.example.org", "http://127.0.0.1:8000"}
	p, err := New(Config{Site: "Lakeshore Polytechnic", Model: "lakeshore", AuthRequired: true, EmbedOrigins: origins})
	if err != nil {
		t.Fatal(err)
	}
	resp := get(t, p, http.MethodGet, "/")
	if resp.Header.Get("Content-Security-Policy") != ContentSecurityPolicy || resp.Header.Get("X-Frame-Options") != "DENY" ||
		strings.Contains(body(t, resp), "data-embed") {
		t.Errorf("the chat page itself must stay unframeable: %v", resp.Header)
	}
	resp = get(t, p, http.MethodGet, "/?embed=1&host=https%3A%2F%2Fwww.example.org")
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.HasSuffix(csp, "; frame-ancestors https://www.example.org http://127.0.0.1:8000") ||
		!strings.HasPrefix(csp, "default-src 'none'; script-src 'self';") || resp.Header.Get("X-Frame-Options") != "" {
		t.Errorf("embedded page: CSP %q, X-Frame-Options %q", csp, resp.Header.Get("X-Frame-Options"))
	}
	if page := body(t, resp); !strings.Contains(page, `data-embed="1" data-embed-origins="https://www.example.org http://127.0.0.1:8000"`) {
		t.Errorf("the embedded page does not carry its origins:\n%s", page)
	}

	resp = get(t, p, http.MethodGet, "/widget.js", "Accept-Encoding", "gzip")
	js := body(t, resp)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/javascript; charset=utf-8" ||
		resp.Header.Get("Cross-Origin-Resource-Policy") != "cross-origin" || !strings.Contains(resp.Header.Get("Cache-Control"), "max-age=300") {
		t.Errorf("GET /widget.js: %d %v", resp.StatusCode, resp.Header)
	}
	if !strings.Contains(js, `const ORIGINS = ["https://www.example.org","http://127.0.0.1:8000"];`) {
		t.Errorf("widget.js does not list the origins it may start on")
	}
	// The budget: a script every page of the site loads stays under 10 KB gzipped.
	if raw, gz := p.WidgetSize(); gz >= 10<<10 || raw == 0 {
		t.Errorf("widget.js is %d bytes, %d gzipped: over the 10 KB budget", raw, gz)
	}

	off, err := New(Config{Site: "Lakeshore Polytechnic", Model: "lakeshore"})
	if err != nil {
		t.Fatal(err)
	}
	if resp := get(t, off, http.MethodGet, "/widget.js"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("without embed origins /widget.js = %d, want 404", resp.StatusCode)
	}
	resp = get(t, off, http.MethodGet, "/?embed=1")
	if resp.Header.Get("Content-Security-Policy") != ContentSecurityPolicy || resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("without embed origins the embedded layout must not be frameable: %v", resp.Header)
	}
	for _, bad := range []string{"*", "www.example.org", "https://www.example.org/path", "https://x.example'; script-src *"} {
		if _, err := New(Config{Site: "S", EmbedOrigins: []string{bad}}); err == nil {
			t.Errorf("New accepted the embed origin %q", bad)
		}
	}
}

// TestLabelsInEachSpokenLanguage checks that the chat page has its labels in every language ragproxy writes its
// own texts in, so that a visitor whose answers come in their language gets the page around them in it too.
func TestLabelsInEachSpokenLanguage(t *testing.T) {
	js, err := os.ReadFile(filepath.Join("assets", "app.js"))
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^    ([a-z]{2}): \{ newChat:`).FindAllStringSubmatch(string(js), -1) {
		labels[m[1]] = true
	}
	for _, lang := range grounding.SpokenLanguages() {
		if lang == "no" {
			lang = "nb" // the page keys Norwegian by the browser's "nb", and gives "no" and "nn" the same labels
		}
		if lang != "en" && !labels[lang] {
			t.Errorf("the chat page has no labels in %q, a language of ragproxy's own texts", lang)
		}
	}
}
