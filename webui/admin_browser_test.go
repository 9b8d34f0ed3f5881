package webui_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/grounding"
	"github.com/ragproxy/ragproxy/insights"
	"github.com/ragproxy/ragproxy/internal/gatewaytest"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/internal/nodetest"
	"github.com/ragproxy/ragproxy/retrieval/faq"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/webui"
)

// TestAdminPageBrowser drives the insights page (/admin/) in Debian's headless chromium through playwright-core
// (clients/adminpage.mjs) against an offline server on the example index whose question log holds a few
// questions, a gap asked twice and a downvote with a hostile comment: the key form, the report, the chart, and an
// FAQ entry made from the gap that answers the next question. It runs only when RAGPROXY_BROWSER_TEST=1.
func TestAdminPageBrowser(t *testing.T) {
	dir := nodetest.Dir(t, "RAGPROXY_BROWSER_TEST", "playwright-core")
	const (
		adminKey  = "adm-page-key-0123"
		clientKey = "sk-page-key-4567"
		gap       = "Is there a shuttle from the train station to campus?"
	)
	ctx := context.Background()
	store, err := insights.OpenSQLite(ctx, filepath.Join(t.TempDir(), "insights.db"), insights.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	r, tok := indextest.Shared(t)
	g := &grounding.Grounder{Retriever: r, Tokenizer: tok, SiteName: "Lakeshore Polytechnic", Offline: true,
		LiveFAQ: grounding.NewLiveFAQ(nil, "")}
	log := insights.NewLog(insights.LogConfig{Store: store})
	api := &insights.API{Store: store, Log: log, FAQChanged: func(_ context.Context, es []insights.FAQEntry) error {
		entries := make([]faq.Entry, len(es))
		for i, e := range es {
			entries[i] = faq.Entry{Question: e.Question, Answer: e.Answer, URL: e.URL}
		}
		g.LiveFAQ.Set(entries)
		return nil
	}}
	page, err := webui.New(webui.Config{Site: "Lakeshore Polytechnic", Model: "lakeshore", AuthRequired: true})
	if err != nil {
		t.Fatal(err)
	}
	h := gatewaytest.Start(t, server.Config{Page: page, Grounder: g, Questions: log, APIKeys: []string{clientKey},
		AdminKeys: []string{adminKey}, Routes: api.ClientRoutes(), Admin: api.AdminRoutes(),
		Models: []server.ModelAlias{{ID: "lakeshore"}}}, openaitest.Config{})
	lctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = log.Run(lctx) }()
	defer func() { stop(); wg.Wait() }()

	ask := func(q string) string {
		status, body, err := gatewaytest.Call(h.Base, "POST", "/v1/chat/completions", clientKey,
			`{"model":"lakeshore","messages":[{"role":"user","content":"`+q+`"}]}`)
		if err != nil || status != 200 {
			t.Fatalf("chat: %d %s %v", status, body, err)
		}
		return gjson.Get(body, "id").String()
	}
	questions := []string{"what is the late filing fee?", "qwxz zzkv " + gap, "qwxz zzkv " + gap}
	var ids []string
	for _, q := range questions {
		ids = append(ids, ask(q))
	}
	status, body, err := gatewaytest.Call(h.Base, "POST", "/v1/feedback", clientKey,
		`{"id":"`+ids[0]+`","rating":"down","comment":"<img src=x onerror=\"window.__pwned=1\"> wrong"}`)
	if err != nil || status != 200 {
		t.Fatalf("feedback: %d %s %v", status, body, err)
	}
	if err := log.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	report, err := store.Report(ctx, insights.ReportQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var proposed string
	for _, tp := range report.Gaps {
		for _, q := range tp.Questions {
			if q.Unanswered+q.LowConfidence >= 2 {
				proposed = q.Question
			}
		}
	}
	if !strings.Contains(proposed, gap) {
		t.Fatalf("no gap asked twice in %+v", report.Gaps)
	}
	shots, err := os.MkdirTemp("", "ragproxy-adminpage-")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", shots)
	nodetest.Run(t, dir, 5*time.Minute, []string{"RAGPROXY_ADMIN_PAGE_URL=" + h.Base, "RAGPROXY_ADMIN_KEY=" + adminKey,
		"RAGPROXY_API_KEY=" + clientKey, "RAGPROXY_GAP_QUESTION=" + proposed,
		"RAGPROXY_EXPECT_QUESTIONS=" + strconv.Itoa(len(questions)), "RAGPROXY_SCREENSHOT_DIR=" + shots}, "adminpage.mjs")
}
