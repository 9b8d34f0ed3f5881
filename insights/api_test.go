package insights

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/tidwall/gjson"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/internal/gatewaytest"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/upstream"
)

const (
	clientKey = "client-key-1234"
	adminKey  = "admin-key-5678"
	pageURL   = "https://u.example/transport/shuttle/"
)

// answering is a Grounder that answers every question itself: "unknown" questions with "I don't know", the
// others citing pageURL.
type answering struct{}

func (answering) Ground(_ context.Context, req *server.GroundRequest) (*server.Grounding, error) {
	q := req.Messages[len(req.Messages)-1].Text()
	if strings.Contains(q, "unknown") {
		return &server.Grounding{Answer: &server.Answer{Text: "I don't know."},
			Question: &server.QuestionReport{Question: q, Outcome: server.OutcomeUnanswered, Confidence: 0.05, Topic: "/transport/"}}, nil
	}
	text := "Yes, hourly. [Shuttle](" + pageURL + ")"
	return &server.Grounding{Answer: &server.Answer{Text: text, Annotations: []compat.Annotation{compat.Citation(pageURL, "Shuttle", 13, len(text))}},
		Question: &server.QuestionReport{Question: q, Outcome: server.OutcomeAnswered, Confidence: 0.8, Topic: "/transport/"}}, nil
}

// gateway is a server with the question log and the insights routes over one store.
type gateway struct {
	base string
	faq  [][]FAQEntry
	mu   sync.Mutex
}

func startGateway(t *testing.T, s Store) (*gateway, func()) {
	t.Helper()
	gw := &gateway{}
	log := NewLog(LogConfig{Store: s})
	api := &API{Store: s, Log: log, Pages: func() []string { return []string{pageURL, "https://u.example/maps/"} },
		FAQChanged: func(_ context.Context, es []FAQEntry) error {
			gw.mu.Lock()
			gw.faq = append(gw.faq, es)
			gw.mu.Unlock()
			return nil
		}}
	up, err := upstream.New(upstream.Config{Primary: upstream.Endpoint{BaseURL: "http://127.0.0.1:1/v1"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(server.Config{APIKeys: []string{clientKey}, AdminKeys: []string{adminKey}, Grounder: answering{},
		Questions: log, Routes: api.ClientRoutes(), Admin: api.AdminRoutes(), Models: []server.ModelAlias{{ID: "site"}}}, up)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gw.base = "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = srv.Serve(ctx, ln) }()
	go func() { defer wg.Done(); _ = log.Run(ctx) }()
	stop := func() { cancel(); wg.Wait() }
	t.Cleanup(stop)
	return gw, stop
}

func (gw *gateway) do(t *testing.T, method, path, key, body string) (int, string) {
	t.Helper()
	status, b, err := gatewaytest.Call(gw.base, method, path, key, body)
	if err != nil {
		t.Fatal(err)
	}
	return status, b
}

func (gw *gateway) ask(t *testing.T, question string) string {
	t.Helper()
	status, body := gw.do(t, "POST", "/v1/chat/completions", clientKey,
		`{"model":"site","messages":[{"role":"user","content":"`+question+`"}]}`)
	if status != 200 {
		t.Fatalf("chat: %d %s", status, body)
	}
	return gjson.Get(body, "id").String()
}

// TestAPI fills a store through the gateway (questions, feedback, FAQ entries), reads the insights, then
// restarts the gateway on the reopened store and reads the same insights back; on SQLite and PostgreSQL.
func TestAPI(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		s, err := b.open(Config{})
		if err != nil {
			t.Fatal(err)
		}
		gw, stop := startGateway(t, s)
		shuttle := gw.ask(t, "Is there a shuttle? Mail me at ann@example.org")
		gw.ask(t, "is there a shuttle, mail me at bob@example.org") // the same question once redacted
		unknown := gw.ask(t, "unknown parking rules")
		// Feedback right after the answer: its question may still be in the log's buffer.
		if status, body := gw.do(t, "POST", "/v1/feedback", clientKey, `{"id":"`+unknown+`","rating":"down","comment":"Call 510-642-6000, it is on the site"}`); status != 200 {
			t.Fatalf("feedback: %d %s", status, body)
		}
		if status, body := gw.do(t, "POST", "/v1/feedback", clientKey, `{"id":"`+shuttle+`","rating":"up"}`); status != 200 {
			t.Fatalf("feedback: %d %s", status, body)
		}
		for _, tc := range []struct {
			body, key string
			status    int
			want      string
		}{
			{`{"id":"chatcmpl-nope","rating":"up"}`, clientKey, 404,
				`{"error":{"message":"No answer with id 'chatcmpl-nope' was found.","type":"invalid_request_error","param":"id","code":"response_not_found"}}`},
			{`{"id":"` + shuttle + `","rating":"meh"}`, clientKey, 400,
				`{"error":{"message":"Invalid value for 'rating': expected 'up' or 'down'.","type":"invalid_request_error","param":"rating","code":"invalid_value"}}`},
			{`{"id":"` + shuttle + `","rating":"up","stars":5}`, clientKey, 400,
				`{"error":{"message":"Unrecognized request argument supplied: stars","type":"invalid_request_error","param":"stars","code":"unknown_parameter"}}`},
		} {
			status, body := gw.do(t, "POST", "/v1/feedback", tc.key, tc.body)
			if status != tc.status || body != tc.want {
				t.Errorf("feedback %s: %d %s, want %d %s", tc.body, status, body, tc.status, tc.want)
			}
		}
		if status, _ := gw.do(t, "POST", "/v1/feedback", "wrong", `{"id":"x","rating":"up"}`); status != 401 {
			t.Errorf("feedback with a wrong key: %d", status)
		}
		if status, _ := gw.do(t, "GET", "/admin/insights", clientKey, ""); status != 401 {
			t.Errorf("insights with a client key: %d", status)
		}
		// FAQ entries: added, listed, deleted, and handed on each time.
		status, body := gw.do(t, "POST", "/admin/faq", adminKey, `{"question":"Where do the rules for parking stand?","answer":"On the parking page.","url":"https://u.example/parking/","lang":" en-GB "}`)
		if status != 200 || gjson.Get(body, "object").String() != "faq.entry" || gjson.Get(body, "lang").String() != "en-GB" {
			t.Fatalf("faq add: %d %s", status, body)
		}
		parking := gjson.Get(body, "id").String()
		status, body = gw.do(t, "POST", "/admin/faq", adminKey, `{"question":"Is there a shuttle?","answer":"Yes.","url":"https://u.example/shuttle/"}`)
		if status != 200 {
			t.Fatalf("faq add: %d %s", status, body)
		}
		if status, body := gw.do(t, "POST", "/admin/faq", adminKey, `{"question":"x","answer":"y","url":"/relative"}`); status != 400 || gjson.Get(body, "error.code").String() != "invalid_url" {
			t.Errorf("faq with a relative url: %d %s", status, body)
		}
		if status, body := gw.do(t, "POST", "/admin/faq", adminKey, `{"question":"Parkplätze?","answer":"B.","url":"https://u.example/p/","lang":"deutsch"}`); status != 400 ||
			gjson.Get(body, "error.param").String() != "lang" || gjson.Get(body, "error.code").String() != "invalid_value" {
			t.Errorf("faq with a language that is no tag: %d %s", status, body)
		}
		if status, body := gw.do(t, "DELETE", "/admin/faq/"+gjson.Get(body, "id").String(), adminKey, ""); status != 200 {
			t.Fatalf("faq delete: %d %s", status, body)
		}
		if status, body := gw.do(t, "DELETE", "/admin/faq/999999", adminKey, ""); status != 404 || gjson.Get(body, "error.code").String() != "faq_entry_not_found" {
			t.Errorf("deleting an unknown entry: %d %s", status, body)
		}
		gw.mu.Lock()
		if len(gw.faq) != 3 || len(gw.faq[2]) != 1 || gw.faq[2][0].Question != "Where do the rules for parking stand?" || gw.faq[2][0].Lang != "en-GB" {
			t.Errorf("FAQ entries handed on: %+v", gw.faq)
		}
		gw.mu.Unlock()

		status, report := gw.do(t, "GET", "/admin/insights?since=7d", adminKey, "")
		if status != 200 {
			t.Fatalf("insights: %d %s", status, report)
		}
		got := gjson.GetMany(report, "totals.questions", "totals.answered", "totals.unanswered", "totals.thumbs_up",
			"totals.thumbs_down", "top_questions.0.question", "top_questions.0.count", "gaps.0.topic",
			"cited_pages.0.url", "never_cited.0", "downvoted.0.comment", "downvoted.0.question")
		var gotS []string
		for _, g := range got {
			gotS = append(gotS, g.String())
		}
		want := []string{"3", "2", "1", "1", "1", "is there a shuttle, mail me at [email]", "2", "/transport/", pageURL, "https://u.example/maps/",
			"Call [phone], it is on the site", "unknown parking rules"}
		if diff := cmp.Diff(want, gotS); diff != "" {
			t.Errorf("insights (-want +got):\n%s\n%s", diff, report)
		}
		status, list := gw.do(t, "GET", "/admin/insights/questions?outcome=answered&per_page=1&page=2", adminKey, "")
		if status != 200 || gjson.Get(list, "total").Int() != 2 || gjson.Get(list, "data.0.question").String() != "Is there a shuttle? Mail me at [email]" {
			t.Errorf("questions: %d %s", status, list)
		}
		if status, body := gw.do(t, "GET", "/admin/insights?since=soon", adminKey, ""); status != 400 || gjson.Get(body, "error.param").String() != "since" {
			t.Errorf("a bad since: %d %s", status, body)
		}
		if status, svg := gw.do(t, "GET", "/admin/insights/chart.svg?since=7d", adminKey, ""); status != 200 ||
			!strings.HasPrefix(svg, `<svg xmlns="http://www.w3.org/2000/svg"`) || !strings.Contains(svg, "3 questions, 2 answered, 1 unanswered, 0 FAQ") {
			t.Errorf("chart: %d %s", status, svg)
		}
		status, faqs := gw.do(t, "GET", "/admin/faq", adminKey, "")
		if status != 200 || gjson.Get(faqs, "data.#").Int() != 1 || gjson.Get(faqs, "data.0.id").String() != parking {
			t.Errorf("faq list: %d %s", status, faqs)
		}

		// A restart on the same database reads the same insights.
		stop()
		s.Close()
		s2, err := b.open(Config{})
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		gw2, _ := startGateway(t, s2)
		for path, before := range map[string]string{"/admin/insights?since=7d": report,
			"/admin/insights/questions?outcome=answered&per_page=1&page=2": list, "/admin/faq": faqs} {
			status, after := gw2.do(t, "GET", path, adminKey, "")
			if status != 200 || after != before {
				t.Errorf("%s after the restart: %d\n%s\nbefore:\n%s", path, status, after, before)
			}
		}
	})
}
