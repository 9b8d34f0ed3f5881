package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx", to make the test's schema
	"github.com/ragproxy/ragproxy/internal/pgtest"

	"github.com/tidwall/gjson"
)

// TestServeInsightsSurviveRestart fills the insights store through a serve process (questions, feedback, an FAQ
// entry), restarts serve on the same database and reads the same insights back, the entry still answering: on
// SQLite (the default, in the index directory) and on PostgreSQL when RAGPROXY_TEST_POSTGRES_URL is set.
func TestServeInsightsSurviveRestart(t *testing.T) {
	dbs := []struct{ name, db string }{{"sqlite", ""}}
	if base := os.Getenv("RAGPROXY_TEST_POSTGRES_URL"); base != "" {
		dbs = append(dbs, struct{ name, db string }{"postgresql", pgtest.Schema(t, base, "serve_")})
	} else {
		t.Log("RAGPROXY_TEST_POSTGRES_URL not set: PostgreSQL not tested")
	}
	for _, tc := range dbs {
		t.Run(tc.name, func(t *testing.T) {
			noBackendsEnv(t)
			t.Setenv("RAGPROXY_ADMIN_KEYS", testAdminKey)
			site, idx := exampleSite(t)
			captureStdout(t)
			s := &servedIndex{site: site, idx: idx}
			s.ingest(t)
			args := []string{}
			if tc.db != "" {
				args = append(args, "--insights-db", tc.db)
			}
			stop := s.serveOn(t, args...)
			ask := func(question string) (id, answer string) {
				t.Helper()
				status, body, err := s.call("POST", "/v1/chat/completions", testClientKey,
					`{"model":"lakeshore","messages":[{"role":"user","content":"`+question+`"}]}`)
				if err != nil || status != 200 {
					t.Fatalf("chat: %d %s %v", status, body, err)
				}
				return gjson.Get(body, "id").String(), gjson.Get(body, "choices.0.message.content").String()
			}
			call := func(method, path, key, body string) string {
				t.Helper()
				status, out, err := s.call(method, path, key, body)
				if err != nil || status != 200 {
					t.Fatalf("%s %s: %d %s %v", method, path, status, out, err)
				}
				return out
			}
			// The offline answer quotes the page that answers; one that "couldn't find a passage" would be unanswered.
			fee, _ := ask("what is the late filing fee?")
			ask("qwxz zzkv")
			call("POST", "/v1/feedback", testClientKey, `{"id":"`+fee+`","rating":"down","comment":"too long, mail me at ann@example.org"}`)
			const shuttle = "Is there a shuttle from the train station to campus?"
			call("POST", "/admin/faq", testAdminKey, `{"question":"`+shuttle+`","answer":"Yes, line 22, hourly.","url":"https://www.lakeshore-poly.example/visit/"}`)
			if _, answer := ask(shuttle); !strings.HasPrefix(answer, "Yes, line 22, hourly.") {
				t.Fatalf("the added entry did not answer: %q", answer)
			}
			var report string
			for deadline := time.Now().Add(10 * time.Second); ; {
				report = call("GET", "/admin/insights?since=7d", testAdminKey, "")
				if gjson.Get(report, "totals.questions").Int() == 3 || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			got := gjson.GetMany(report, "totals.questions", "totals.answered", "totals.unanswered", "totals.faq", "totals.thumbs_down",
				"downvoted.0.question", "downvoted.0.comment")
			want := []string{"3", "1", "1", "1", "1", "what is the late filing fee?", "too long, mail me at [email]"}
			for i := range want {
				if got[i].String() != want[i] {
					t.Errorf("insights: %v, want %v\n%s", got, want, report)
					break
				}
			}
			questions := call("GET", "/admin/insights/questions?since=7d", testAdminKey, "")
			stop()

			stop = s.serveOn(t, args...)
			defer stop()
			if again := call("GET", "/admin/insights?since=7d", testAdminKey, ""); again != report {
				t.Errorf("insights after the restart:\n%s\nbefore:\n%s", again, report)
			}
			if again := call("GET", "/admin/insights/questions?since=7d", testAdminKey, ""); again != questions {
				t.Errorf("questions after the restart:\n%s\nbefore:\n%s", again, questions)
			}
			if _, answer := ask(shuttle); !strings.HasPrefix(answer, "Yes, line 22, hourly.") {
				t.Errorf("the added entry did not answer after the restart: %q", answer)
			}
			// An entry in another language than the site's is read in the language it is given: "Parkplatz?" meets
			// "Parkplätze?" as German, not as English (the site's language, which the entry's words do not overrule).
			call("POST", "/admin/faq", testAdminKey, `{"question":"Parkplätze?","answer":"Parkplatz B.","url":"https://www.lakeshore-poly.example/visit/","lang":"de"}`)
			if _, answer := ask("Parkplatz?"); !strings.HasPrefix(answer, "Parkplatz B.") {
				t.Errorf("the German entry did not answer: %q", answer)
			}
			for deadline := time.Now().Add(10 * time.Second); ; {
				report = call("GET", "/admin/insights?since=7d", testAdminKey, "")
				if gjson.Get(report, "totals.questions").Int() == 5 || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			stop()

			// The report without a server is the admin API's.
			cli := []string{"insights", "--index", idx, "--since", "7d"}
			if tc.db != "" {
				cli = append(cli, "--db", tc.db)
			}
			stdout := captureStdout(t)
			if err := run(context.Background(), append(cli, "--json")); err != nil {
				t.Fatal(err)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, stdout()); err != nil {
				t.Fatal(err)
			}
			if compact.String() != report {
				t.Errorf("ragproxy insights --json:\n%s\nthe admin API:\n%s", compact.String(), report)
			}
			page := filepath.Join(t.TempDir(), "insights.html")
			if err := run(context.Background(), append(cli, "--html", page)); err != nil {
				t.Fatal(err)
			}
			if html, err := os.ReadFile(page); err != nil || !strings.Contains(string(html), "what is the late filing fee?") {
				t.Errorf("the HTML report lacks the questions (%v)", err)
			}
			if err := run(context.Background(), cli); err != nil {
				t.Fatal(err)
			}
			if text := string(stdout()); !strings.Contains(text, "questions          5") {
				t.Errorf("the text report:\n%s", text)
			}
		})
	}
}
