package webui_test

import (
	"encoding/json"
	"html/template"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/grounding"
	"github.com/ragproxy/ragproxy/internal/gatewaytest"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/internal/nodetest"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/webui"
)

// hostPage is a page of the organisation's site carrying the widget, with a style sheet that tries to reach every
// element it could: the widget must look the same under it, and leave the page's own elements as they are.
var hostPage = template.Must(template.New("host").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tuition and Fees | Lakeshore</title>
<style>
* { font-family: "Comic Sans MS", fantasy !important; color: rgb(255, 0, 0) !important; letter-spacing: 9px !important; }
button { background: rgb(0, 255, 0) !important; border-radius: 0 !important; }
iframe, ragproxy-widget, [role=dialog] { display: none !important; opacity: 0 !important; }
div { border: 7px solid rgb(0, 0, 255) !important; }
</style></head>
<body><h1>Tuition and Fees</h1><p id="host-text">In-state tuition is listed below.</p>
<button type="button" id="host-button">A button of the page</button>
<script src="{{.Assistant}}/widget.js" defer data-key="{{.Key}}" data-assistant="lakeshore" data-colour="#0a7d3b"
  data-title="Lakeshore assistant" data-greeting="Questions about tuition?" data-lang="en-GB"></script>
</body></html>`))

// TestWidgetBrowser drives the widget (/widget.js) in Debian's headless chromium through playwright-core
// (clients/widget.mjs): host pages on two other loopback ports, one listed in the embed origins and one not, in
// front of a grounded server with client keys, a publishable key and a fake model. It needs chromium and `npm
// ci` in clients, so it runs only when RAGPROXY_BROWSER_TEST=1.
func TestWidgetBrowser(t *testing.T) {
	dir := nodetest.Dir(t, "RAGPROXY_BROWSER_TEST", "playwright-core")
	r, tok := indextest.Shared(t)
	const pk = "pk_lakeshore_widget_0001"

	// The host pages need the assistant's address and the assistant their origins: the handlers read it late.
	var assistant string
	host := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_ = hostPage.Execute(w, struct{ Assistant, Key string }{assistant, pk})
	})
	listed := httptest.NewServer(host)
	t.Cleanup(listed.Close)
	other := httptest.NewServer(host)
	t.Cleanup(other.Close)

	page, err := webui.New(webui.Config{Site: "Lakeshore Polytechnic", Model: "lakeshore", AuthRequired: true,
		EmbedOrigins: []string{listed.URL}})
	if err != nil {
		t.Fatal(err)
	}
	h := gatewaytest.Start(t, server.Config{Page: page, Models: []server.ModelAlias{{ID: "lakeshore"}},
		Grounder:   &grounding.Grounder{Retriever: r, Tokenizer: tok, SiteName: "Lakeshore Polytechnic"},
		APIKeys:    []string{"sk-secret-not-for-browsers"},
		Embed:      server.Embed{Origins: []string{listed.URL}, Keys: []string{pk}, RequestsPerMinute: 100},
		RateLimits: server.RateLimits{RequestsPerMinute: 100}}, openaitest.Config{Reply: pageModel})
	assistant = h.Base

	// The fake model's requests: the script checks that the page the question was asked from reached the prompt.
	fakeLog := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		var out [][]string
		for _, req := range h.Fake.Requests() {
			var texts []string
			for _, m := range req.Messages {
				texts = append(texts, m.Role+": "+m.Text())
			}
			out = append(out, texts)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(fakeLog.Close)

	shots, err := os.MkdirTemp("", "ragproxy-widget-")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", shots)
	nodetest.Run(t, dir, 5*time.Minute, []string{"RAGPROXY_ASSISTANT_URL=" + h.Base, "RAGPROXY_HOST_URL=" + listed.URL,
		"RAGPROXY_OTHER_HOST_URL=" + other.URL, "RAGPROXY_WIDGET_KEY=" + pk, "RAGPROXY_FAKE_LOG_URL=" + fakeLog.URL,
		"RAGPROXY_SCREENSHOT_DIR=" + shots}, "widget.mjs")
}
