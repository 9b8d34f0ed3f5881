package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/internal/ssetest"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/server"
)

const (
	observatoryURL  = examples.BaseURL + "observatory/"
	observatoryMD   = "# Zorblax Observatory\n\nThe Zorblax Observatory on the roof of the science building opens to visitors every Tuesday at 7:45 pm, weather permitting.\n"
	observatoryQ    = `{"model":"lakeshore","messages":[{"role":"user","content":"when does the zorblax observatory open to visitors?"}]}`
	observatoryFact = "7:45 pm"
	calendarURL     = examples.BaseURL + "academic-calendar/"
)

// admin makes an admin call with the admin key, checks its status and decodes its body into out (when not nil).
func (s *servedIndex) admin(t *testing.T, method, path, body string, status int, out any) string {
	t.Helper()
	got, b, err := s.call(method, path, testAdminKey, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if got != status {
		t.Fatalf("%s %s: %d %s, want %d", method, path, got, b, status)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(b), out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, b)
		}
	}
	return b
}

// adminError makes an admin call that must fail with status and code in OpenAI's error body.
func (s *servedIndex) adminError(t *testing.T, method, path, body string, status int, code string) {
	t.Helper()
	var e struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
	b := s.admin(t, method, path, body, status, &e)
	got := ""
	if e.Error.Code != nil {
		got = *e.Error.Code
	}
	if e.Error.Type == "" || e.Error.Message == "" || got != code {
		t.Errorf("%s %s: body %s, want an OpenAI error with code %q", method, path, b, code)
	}
}

// ask asks the assistant question (a chat request body) and returns the answer's text.
func (s *servedIndex) ask(t *testing.T, question string) string {
	t.Helper()
	status, body, err := s.call(http.MethodPost, "/v1/chat/completions", testClientKey, question)
	if err != nil || status != http.StatusOK {
		t.Fatalf("chat: %d %v %.300s", status, err, body)
	}
	return ssetest.Answer(t, body)
}

func pagePath(u string) string { return "/admin/pages/" + url.PathEscape(u) }

// TestAdminPagesEndToEnd puts a page with a fact no page has, asks about it, deletes it and asks again; then
// deletes a page of the site and checks that a re-ingest keeps it deleted until the edit is forgotten. serve runs
// without the watcher, so every switch is the admin call's own.
func TestAdminPagesEndToEnd(t *testing.T) {
	s := startServe(t, 0)
	before := s.version(t)
	if a := s.ask(t, observatoryQ); strings.Contains(a, observatoryFact) {
		t.Fatalf("the fact is known before the page is put: %s", a)
	}

	var put editResult
	body, _ := json.Marshal(map[string]string{"url": observatoryURL, "markdown": observatoryMD})
	s.admin(t, http.MethodPut, "/admin/pages", string(body), http.StatusOK, &put)
	if !put.Switched || put.Previous != before || put.Version == before || put.URL != observatoryURL {
		t.Fatalf("put: %+v", put)
	}
	if v := s.version(t); v != put.Version {
		t.Fatalf("serving %s after the put, want %s", v, put.Version)
	}
	if a := s.ask(t, observatoryQ); !strings.Contains(a, observatoryFact) {
		t.Errorf("the answer after the put does not quote the page's fact: %s", a)
	}

	var list pageList
	s.admin(t, http.MethodGet, "/admin/pages?prefix="+url.QueryEscape(examples.BaseURL+"obs"), "", http.StatusOK, &list)
	if list.Total != 1 || len(list.Data) != 1 || list.Data[0].URL != observatoryURL || list.Data[0].Edit != "put" ||
		list.Data[0].Title != "Zorblax Observatory" || list.Data[0].Chunks == 0 || list.Version != put.Version {
		t.Errorf("page list by prefix: %+v", list)
	}
	var all pageList
	s.admin(t, http.MethodGet, "/admin/pages?limit=2&offset=1", "", http.StatusOK, &all)
	if len(all.Data) != 2 || !all.HasMore || all.Total != put.Pages || all.Data[0].URL >= all.Data[1].URL {
		t.Errorf("a page of the list: %+v", all)
	}
	var one pageView
	s.admin(t, http.MethodGet, pagePath(observatoryURL), "", http.StatusOK, &one)
	if len(one.ChunkTexts) == 0 || !strings.Contains(one.ChunkTexts[0].Text, observatoryFact) || one.Hash == "" ||
		!strings.Contains(one.Markdown, "Zorblax") {
		t.Errorf("the put page: %+v", one)
	}

	var del editResult
	s.admin(t, http.MethodDelete, pagePath(observatoryURL), "", http.StatusOK, &del)
	if !del.Switched || del.Previous != put.Version || s.version(t) != del.Version {
		t.Fatalf("delete: %+v", del)
	}
	if a := s.ask(t, observatoryQ); strings.Contains(a, observatoryFact) {
		t.Errorf("the answer after the delete still quotes the page: %s", a)
	}
	s.adminError(t, http.MethodGet, pagePath(observatoryURL), "", http.StatusNotFound, "page_not_found")
	s.adminError(t, http.MethodDelete, pagePath(observatoryURL), "", http.StatusNotFound, "page_not_found")

	// Deleting a page of the site outlives a re-ingest of the site, until the edit is forgotten.
	if a := s.ask(t, reloadQuestion); !strings.Contains(a, oldStart) {
		t.Fatalf("the calendar question is not answered from the calendar: %s", a)
	}
	s.admin(t, http.MethodDelete, pagePath(calendarURL), "", http.StatusOK, nil)
	if a := s.ask(t, reloadQuestion); strings.Contains(a, oldStart) {
		t.Errorf("the answer after deleting the calendar still quotes it: %s", a)
	}
	s.ingest(t)
	s.admin(t, http.MethodPost, "/admin/index/reload", "", http.StatusOK, nil)
	s.adminError(t, http.MethodGet, pagePath(calendarURL), "", http.StatusNotFound, "page_not_found")
	var edits struct {
		Data []editView `json:"data"`
	}
	s.admin(t, http.MethodGet, "/admin/edits", "", http.StatusOK, &edits)
	if len(edits.Data) != 2 || edits.Data[0].URL != calendarURL || edits.Data[0].Kind != "deleted" ||
		edits.Data[1].URL != observatoryURL || edits.Data[1].By == "" {
		t.Errorf("edits: %+v", edits.Data)
	}
	s.admin(t, http.MethodDelete, "/admin/edits/"+url.PathEscape(calendarURL), "", http.StatusOK, nil)
	s.adminError(t, http.MethodDelete, "/admin/edits/"+url.PathEscape(calendarURL), "", http.StatusNotFound, "edit_not_found")
	s.ingest(t)
	s.admin(t, http.MethodPost, "/admin/index/reload", "", http.StatusOK, nil)
	s.admin(t, http.MethodGet, pagePath(calendarURL), "", http.StatusOK, nil)

	// Requests that cannot be carried out.
	for _, c := range []struct {
		name, body, code string
	}{
		{"bad JSON", `{"url":`, ""},
		{"unknown field", `{"url":"` + observatoryURL + `","markdwon":"x"}`, "unknown_parameter"},
		{"no content", `{"url":"` + observatoryURL + `"}`, ""},
		{"both contents", `{"url":"` + observatoryURL + `","markdown":"# A","html":"<p>a</p>"}`, ""},
		{"off the site", `{"url":"https://elsewhere.example/x/","markdown":"# A\n\ntext"}`, "off_site"},
		{"not a URL", `{"url":"/relative/","markdown":"# A\n\ntext"}`, "invalid_url"},
		{"empty page", `{"url":"` + observatoryURL + `","html":"<html><body></body></html>"}`, "no_content"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, b, err := s.call(http.MethodPut, "/admin/pages", testAdminKey, c.body)
			if err != nil || status != http.StatusBadRequest || !strings.Contains(b, `"invalid_request_error"`) ||
				(c.code != "" && !strings.Contains(b, `"code":"`+c.code+`"`)) {
				t.Errorf("%d %s %v, want 400 %s", status, b, err, c.code)
			}
		})
	}
	s.adminError(t, http.MethodGet, "/admin/pages?limit=0", "", http.StatusBadRequest, "")
}

// adminRoutes are every admin route with a path that exists.
var adminRoutes = []struct{ method, path string }{
	{http.MethodGet, "/admin/index"},
	{http.MethodPost, "/admin/index/reload"},
	{http.MethodGet, "/admin/pages"},
	{http.MethodPut, "/admin/pages"},
	{http.MethodGet, pagePath(calendarURL)},
	{http.MethodDelete, pagePath(calendarURL)},
	{http.MethodGet, "/admin/edits"},
	{http.MethodDelete, "/admin/edits/" + url.PathEscape(calendarURL)},
	{http.MethodPost, "/admin/ingest"},
	{http.MethodGet, "/admin/jobs"},
	{http.MethodGet, "/admin/jobs/job-0"},
	{http.MethodDelete, "/admin/jobs/job-0"},
	{http.MethodGet, "/admin/versions"},
	{http.MethodPost, "/admin/versions/0/activate"},
}

// TestAdminRefusals checks that no admin route answers without the admin key, with a client key, or at all when
// no admin key is configured, and that nothing changed.
func TestAdminRefusals(t *testing.T) {
	s := startServe(t, 0)
	before := s.version(t)
	put := `{"url":"` + observatoryURL + `","markdown":"` + strings.ReplaceAll(observatoryMD, "\n", `\n`) + `"}`
	for _, rt := range adminRoutes {
		for _, key := range []string{"", testClientKey, "adm-wrong-0123456789"} {
			status, body, err := s.call(rt.method, rt.path, key, put)
			if err != nil || status != http.StatusUnauthorized || !strings.Contains(body, `"invalid_api_key"`) {
				t.Errorf("%s %s with key %q: %d %s %v, want 401 invalid_api_key", rt.method, rt.path, key, status, body, err)
			}
		}
	}
	if v := s.version(t); v != before {
		t.Errorf("refused calls changed the served version: %s -> %s", before, v)
	}
	if a := s.ask(t, observatoryQ); strings.Contains(a, observatoryFact) {
		t.Errorf("a refused put reached the index: %s", a)
	}

	off := startServeAdmin(t, "", 0)
	for _, rt := range adminRoutes {
		status, body, err := off.call(rt.method, rt.path, testAdminKey, put)
		if err != nil || status != http.StatusForbidden || !strings.Contains(body, `"admin_disabled"`) {
			t.Errorf("without admin keys, %s %s: %d %s %v, want 403 admin_disabled", rt.method, rt.path, status, body, err)
		}
	}
}

// waitJob waits for a job to end, for at most a minute, and returns it as GET /admin/jobs/{id} shows it.
func (s *servedIndex) waitJob(t *testing.T, id string) jobView {
	t.Helper()
	j, err := s.adm.findJob(&server.Request{Params: map[string]string{"id": id}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-j.done:
	case <-time.After(time.Minute):
		t.Fatalf("job %s did not end within a minute", id)
	}
	var v jobView
	s.admin(t, http.MethodGet, "/admin/jobs/"+id, "", http.StatusOK, &v)
	return v
}

// TestAdminIngestJobAndVersions runs ingest jobs through the admin API: one held up by a site that does not
// answer (a second job and edits are refused meanwhile, and it is cancelled), then a mirror of the changed example
// site, which the server switches to; then it switches back to the earlier version.
func TestAdminIngestJobAndVersions(t *testing.T) {
	s := startServe(t, 0)
	before := s.version(t)

	hold := make(chan struct{})
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hold:
		case <-r.Context().Done():
		}
	}))
	defer stuck.Close()
	defer close(hold)
	var first jobView
	s.admin(t, http.MethodPost, "/admin/ingest", fmt.Sprintf(`{"source":%q,"options":{"allow-private":true,"no-sitemaps":true,"delay":"-1ns"}}`, stuck.URL+"/"),
		http.StatusAccepted, &first)
	if first.ID == "" || (first.State != jobQueued && first.State != jobRunning) {
		t.Fatalf("started job: %+v", first)
	}
	mirror := fmt.Sprintf(`{"source":%q,"options":{"base-url":%q}}`, s.site, examples.BaseURL)
	s.adminError(t, http.MethodPost, "/admin/ingest", mirror, http.StatusConflict, "job_running")
	s.adminError(t, http.MethodDelete, pagePath(calendarURL), "", http.StatusConflict, "job_running")
	var cancelled jobView
	s.admin(t, http.MethodDelete, "/admin/jobs/"+first.ID, "", http.StatusOK, nil)
	if cancelled = s.waitJob(t, first.ID); cancelled.State != jobCancelled || cancelled.Error == nil {
		t.Fatalf("cancelled job: %+v", cancelled)
	}
	if v := s.version(t); v != before {
		t.Fatalf("a cancelled job changed the version: %s", v)
	}

	for _, c := range []struct{ name, body, code string }{
		{"no source", `{"options":{}}`, ""},
		{"unknown option", fmt.Sprintf(`{"source":%q,"options":{"no-such-flag":1}}`, s.site), "invalid_option"},
		{"index", fmt.Sprintf(`{"source":%q,"options":{"index":"/tmp/x"}}`, s.site), ""},
		{"bad value", fmt.Sprintf(`{"source":%q,"options":{"max-pages":"many"}}`, s.site), "invalid_option"},
	} {
		status, b, err := s.call(http.MethodPost, "/admin/ingest", testAdminKey, c.body)
		if err != nil || status != http.StatusBadRequest || (c.code != "" && !strings.Contains(b, `"code":"`+c.code+`"`)) {
			t.Errorf("%s: %d %s %v, want 400 %s", c.name, status, b, err, c.code)
		}
	}

	s.changeCalendar(t)
	var started jobView
	s.admin(t, http.MethodPost, "/admin/ingest", mirror, http.StatusAccepted, &started)
	done := s.waitJob(t, started.ID)
	if done.State != jobSucceeded || done.Error != nil || done.Report == nil || done.Reload == nil || !done.Reload.Switched ||
		done.Reload.Previous != before || done.Report.Version != done.Reload.Version || done.Report.Reused != done.Report.Pages-1 {
		t.Fatalf("mirror job: %+v", done)
	}
	finished := map[string]bool{}
	for _, p := range done.Progress {
		finished[p.Stage] = p.Finished && (p.Total < 0 || p.Done == p.Total)
	}
	for _, stage := range []string{"crawled", "cleaned", "chunked", "embedded"} {
		if !finished[stage] {
			t.Errorf("job progress lacks the finished stage %q: %+v", stage, done.Progress)
		}
	}
	after := s.version(t)
	if after != done.Reload.Version {
		t.Fatalf("serving %s after the job, want %s", after, done.Reload.Version)
	}
	if a := s.ask(t, reloadQuestion); !strings.Contains(a, newStart) {
		t.Errorf("the answer after the job does not name the new start: %s", a)
	}
	var jobs struct {
		Data []jobView `json:"data"`
	}
	s.admin(t, http.MethodGet, "/admin/jobs", "", http.StatusOK, &jobs)
	if len(jobs.Data) != 2 || jobs.Data[0].ID != started.ID || jobs.Data[1].ID != first.ID {
		t.Errorf("jobs, newest first: %+v", jobs.Data)
	}

	var versions struct {
		Current, Served string
		Data            []versionView
	}
	s.admin(t, http.MethodGet, "/admin/versions", "", http.StatusOK, &versions)
	if versions.Current != after || versions.Served != after || len(versions.Data) != 2 ||
		versions.Data[0].Version != after || !versions.Data[0].Served || versions.Data[1].Version != before ||
		versions.Data[1].Current || versions.Data[1].Pages == 0 {
		t.Fatalf("versions: %+v", versions)
	}
	var back reloadResult
	s.admin(t, http.MethodPost, "/admin/versions/"+before+"/activate", "", http.StatusOK, &back)
	if !back.Switched || back.Version != before || back.Previous != after || s.version(t) != before {
		t.Fatalf("activate %s: %+v", before, back)
	}
	if a := s.ask(t, reloadQuestion); !strings.Contains(a, oldStart) {
		t.Errorf("the answer after switching back does not name the old start: %s", a)
	}
	s.adminError(t, http.MethodPost, "/admin/versions/0123456789abcdef/activate", "", http.StatusNotFound, "version_not_found")
	if v := s.version(t); v != before {
		t.Errorf("a failed activation changed the version: %s", v)
	}
}

// TestAdminJobEndsWithTheServer checks that a running job is cancelled when the server's lifetime ends, that
// Run waits for it, and that no job starts afterwards.
func TestAdminJobEndsWithTheServer(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "lakeshore")
	indextest.Build(t, indextest.ExampleSite(t), examples.BaseURL, idx)
	r, err := retrieval.Open(idx, nil, nil, retrieval.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	live := retrieval.NewLive(r, func() { r.Index().Close() })
	defer live.Close()
	a, err := New(Config{Dir: idx, Live: live, ParseIngest: parseTestIngest, Jobs: JobPolicy{AllowPrivate: true},
		Open: func(context.Context) (*retrieval.Retriever, func(), error) {
			return nil, nil, errors.New("no reloads here")
		}})
	if err != nil {
		t.Fatal(err)
	}

	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer stuck.Close()
	life, end := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); a.Run(life) }()
	body := fmt.Sprintf(`{"source":%q,"options":{"allow-private":true,"no-sitemaps":true}}`, stuck.URL+"/")
	out, err := a.startJob(context.Background(), &server.Request{Body: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	id := out.(jobView).ID

	end()
	select {
	case <-ran:
	case <-time.After(time.Minute):
		t.Fatal("Run did not return within a minute of the server's end")
	}
	j, err := a.findJob(&server.Request{Params: map[string]string{"id": id}})
	if err != nil {
		t.Fatal(err)
	}
	if v := j.view(); v.State != jobCancelled || v.FinishedAt == nil {
		t.Errorf("job after the server ended: %+v", v)
	}
	if _, err := a.startJob(context.Background(), &server.Request{Body: []byte(body)}); err == nil ||
		!strings.Contains(err.Error(), "shutting down") {
		t.Errorf("a job started after the end: %v, want a refusal", err)
	}
}

// TestJobPolicy checks what a job may ask for: by default only the options that describe the site, public
// addresses and no directories; the operator's policy allows more, a mirror only under its root.
func TestJobPolicy(t *testing.T) {
	root := t.TempDir()
	inside := filepath.Join(root, "site")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	req := func(source string, options map[string]any) ingestRequest {
		in := ingestRequest{Source: source, Options: map[string]json.RawMessage{}}
		for k, v := range options {
			b, _ := json.Marshal(v)
			in.Options[k] = b
		}
		return in
	}
	mirrors := JobPolicy{MirrorRoot: root}
	for _, c := range []struct {
		name   string
		policy JobPolicy
		in     ingestRequest
		ok     bool
	}{
		{"the site's options", JobPolicy{}, req("https://site.example/", map[string]any{"section": []string{"/a/"}, "max-pages": 5, "delay": "1s", "full": true, "chunk-max-tokens": 900}), true},
		{"the upstream", JobPolicy{}, req("https://site.example/", map[string]any{"upstream-url": "http://127.0.0.1:1/v1", "summaries": "llm"}), false},
		{"a backend", JobPolicy{}, req("https://site.example/", map[string]any{"qdrant-url": "http://127.0.0.1:1"}), false},
		{"a model", JobPolicy{}, req("https://site.example/", map[string]any{"embedder": "openai"}), false},
		{"private addresses", JobPolicy{}, req("http://127.0.0.1:1/", map[string]any{"allow-private": true}), false},
		{"private addresses, listed", JobPolicy{Options: []string{"allow-private"}}, req("http://127.0.0.1:1/", map[string]any{"allow-private": true}), false},
		{"private addresses, allowed", JobPolicy{AllowPrivate: true}, req("http://127.0.0.1:1/", map[string]any{"allow-private": true}), true},
		{"the operator's options", JobPolicy{Options: []string{"summaries"}}, req("https://site.example/", map[string]any{"summaries": "extractive"}), true},
		{"a directory", JobPolicy{}, req(inside, nil), false},
		{"a directory under the root", mirrors, req(inside, map[string]any{"base-url": "https://site.example/"}), true},
		{"the root's parent", mirrors, req(filepath.Join(root, ".."), nil), false},
		{"a link out of the root", mirrors, req(filepath.Join(root, "link"), nil), false},
		{"another directory", mirrors, req(outside, nil), false},
		{"a file URL", mirrors, req("file://"+inside, nil), false},
	} {
		err := c.policy.check(c.in)
		var ae *compat.APIError
		if c.ok && err != nil || !c.ok && (!errors.As(err, &ae) || ae.Status != http.StatusBadRequest || ae.Code != "invalid_option") {
			t.Errorf("%s: %v, want ok %v (else 400 invalid_option)", c.name, err, c.ok)
		}
	}
}

// TestJobRefusedWithoutPrivateAddresses checks a server started without private addresses allowed: a job that
// asks for them is refused before anything runs, and none is remembered.
func TestJobRefusedWithoutPrivateAddresses(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "lakeshore")
	indextest.Build(t, indextest.ExampleSite(t), examples.BaseURL, idx)
	r, err := retrieval.Open(idx, nil, nil, retrieval.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	live := retrieval.NewLive(r, func() { r.Index().Close() })
	defer live.Close()
	var asked []string
	a, err := New(Config{Dir: idx, Live: live, ParseIngest: func(args []string, out io.Writer) (*Ingest, error) {
		asked = append(asked, args...)
		return parseTestIngest(args, out)
	}, Open: func(context.Context) (*retrieval.Retriever, func(), error) {
		return nil, nil, errors.New("no reloads here")
	}})
	if err != nil {
		t.Fatal(err)
	}
	intranet := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the job reached the private address: %s", r.URL)
	}))
	defer intranet.Close()
	body := fmt.Sprintf(`{"source":%q,"options":{"allow-private":true,"no-sitemaps":true}}`, intranet.URL+"/")
	_, err = a.startJob(context.Background(), &server.Request{Body: []byte(body)})
	var ae *compat.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || ae.Code != "invalid_option" {
		t.Fatalf("a job with private addresses: %v, want 400 invalid_option", err)
	}
	if len(asked) != 0 || len(a.jobs) != 0 || a.running != nil {
		t.Errorf("a refused job was parsed (%q) or remembered (%d)", asked, len(a.jobs))
	}
}
