package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	qc "github.com/qdrant/go-client/qdrant"

	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/grounding"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/qdrant"
	"github.com/ragproxy/ragproxy/retrieval/qdrant/qdranttest"
	"github.com/ragproxy/ragproxy/serve"
	"github.com/ragproxy/ragproxy/tokenizer"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAssistantFlags(t *testing.T) {
	t.Setenv("RAGPROXY_ASSISTANTS", "")
	t.Setenv("RAGPROXY_NAME", "")
	good := writeFile(t, "assistants.yaml", `
- name: nursing
  prefixes: [/programs/nursing/]
  site_name: Lakeshore Polytechnic — Nursing
- name: admissions
  prefixes: ["https://www.lakeshore-poly.example/admissions", /tuition/]
`)
	asJSON := writeFile(t, "assistants.json", `[{"name": "nursing", "prefixes": ["/programs/nursing/"]}]`)
	tests := []struct {
		name string
		args []string
		want string // in the error; "" for none
	}{
		{"flags", []string{"--assistant", "nursing=/programs/nursing/", "--assistant", "cs=/programs/computer-science/, /courses/cs/"}, ""},
		{"file", []string{"--assistants", good}, ""},
		{"JSON file and a flag", []string{"--assistants", asJSON, "--assistant", "cs=/programs/computer-science/"}, ""},
		{"no prefix", []string{"--assistant", "nursing"}, "want NAME=PREFIX"},
		{"no name", []string{"--assistant", "=/programs/"}, "want NAME=PREFIX"},
		{"empty prefixes", []string{"--assistant", "nursing= , "}, "no URL prefixes"},
		{"relative prefix", []string{"--assistant", "nursing=programs/nursing"}, "want an absolute http(s) URL or a path starting with /"},
		{"bad name", []string{"--assistant", "nurs ing=/programs/nursing/"}, "not a valid model id"},
		{"duplicate name", []string{"--assistant", "nursing=/a/", "--assistant", "nursing=/b/"}, `name "nursing" is also defined by --assistant nursing`},
		{"duplicate across file and flag", []string{"--assistants", good, "--assistant", "admissions=/b/"}, "is also defined by --assistants"},
		{"the site's model id", []string{"--name", "lakeshore", "--assistant", "lakeshore=/a/"}, "already a model served"},
		{"the index's name", []string{"--assistant", "lakeshore=/a/"}, "already a model served"},
		{"the upstream model", []string{"--model", "gpt-4o-mini", "--assistant", "gpt-4o-mini=/a/"}, "already a model served"},
		{"missing file", []string{"--assistants", filepath.Join(t.TempDir(), "none.yaml")}, "--assistants"},
		{"unknown field", []string{"--assistants", writeFile(t, "a.yaml", "- name: x\n  prefix: [/a/]\n")}, "field prefix not found"},
		{"not a list", []string{"--assistants", writeFile(t, "b.yaml", "name: x\nprefixes: [/a/]\n")}, "want a list of"},
		{"entry without prefixes", []string{"--assistants", writeFile(t, "c.yaml", "- name: x\n")}, "entry 1 (x): no URL prefixes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseServeFlags(append([]string{"--index", filepath.Join(t.TempDir(), "lakeshore")}, tt.args...))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("parse: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("parse = %v, want an error with %q", err, tt.want)
			case tt.want == "" && len(f.assistants.list.Names()) == 0:
				t.Fatal("no assistants parsed")
			}
		})
	}
	if _, err := parseServeFlags([]string{"--assistant", "nursing=/programs/nursing/"}); !errors.Is(err, grounding.ErrAssistant) ||
		!strings.Contains(err.Error(), "need --index") {
		t.Errorf("assistants without an index: %v", err)
	}
	f, err := parseServeFlags([]string{"--index", "x/lakeshore", "--assistants", good})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := f.assistants.list.Find("admissions")
	if diff := cmp.Diff([]string{"//www.lakeshore-poly.example/admissions/", "/tuition/"}, a.Scope.Keys()); diff != "" {
		t.Errorf("admissions' prefixes (-want +got):\n%s", diff)
	}
	if n, _ := f.assistants.list.Find("nursing"); n.SiteName != "Lakeshore Polytechnic — Nursing" {
		t.Errorf("nursing's site name = %q", n.SiteName)
	}
}

// TestAssistantUnknownPrefix starts on an index where an assistant's prefix matches no page: a clear start-up
// error naming the assistant and the prefix.
func TestAssistantUnknownPrefix(t *testing.T) {
	noBackendsEnv(t)
	t.Setenv("RAGPROXY_ASSISTANTS", "")
	site, idx := exampleSite(t)
	captureStdout(t)
	if err := run(context.Background(), []string{"ingest", site, "--base-url", examples.BaseURL, "--index", idx}); err != nil {
		t.Fatal(err)
	}
	f, err := parseServeFlags([]string{"--index", idx, "--assistant", "nursing=/programs/nursing/", "--assistant", "grad=/graduate/, /programs/"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.New()
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = serve.OpenVersion(context.Background(), f.cfg, tok, slog.New(slog.DiscardHandler), false)
	if !errors.Is(err, retrieval.ErrScopePrefix) || !strings.Contains(err.Error(), `--assistant grad: scope: prefix "/graduate/" matches no page`) {
		t.Errorf("openVersion = %v, want an error naming grad's /graduate/", err)
	}
	err = run(context.Background(), []string{"eval", "--index", idx, "--questions", writeFile(t, "q.jsonl", string(examples.Questions)),
		"--assistant", "grad=/graduate/"})
	if !errors.Is(err, retrieval.ErrScopePrefix) {
		t.Errorf("eval with a prefix matching nothing = %v", err)
	}
}

// TestServeAssistants serves the example site with two assistants, from a file and a flag: both are models in
// /v1/models, a request to one is answered in its name from its pages, /v1/retrieve retrieves as it, and its
// name is a metric label.
func TestServeAssistants(t *testing.T) {
	t.Setenv("RAGPROXY_ASSISTANTS", writeFile(t, "assistants.yaml", "- name: nursing\n  prefixes: [/programs/nursing/]\n  site_name: Lakeshore Nursing\n"))
	s := startServe(t, "--assistant", "admissions=/admissions/")
	status, body, err := s.call(http.MethodGet, "/v1/models", testClientKey, "")
	if err != nil || status != 200 {
		t.Fatalf("models: %d %s %v", status, body, err)
	}
	var models struct{ Data []struct{ ID string } }
	json.Unmarshal([]byte(body), &models)
	var ids []string
	for _, m := range models.Data {
		ids = append(ids, m.ID)
	}
	if diff := cmp.Diff([]string{"lakeshore", "nursing", "admissions"}, ids); diff != "" {
		t.Errorf("/v1/models (-want +got):\n%s", diff)
	}

	status, body, err = s.call(http.MethodPost, "/v1/chat/completions", testClientKey,
		`{"model":"nursing","stream":true,"messages":[{"role":"user","content":"what are the admission requirements?"}]}`)
	if err != nil || status != 200 {
		t.Fatalf("chat: %d %s %v", status, body, err)
	}
	// Quoted passages may hold links anywhere; what the answer cites ("From [title](url)") is the nursing page.
	if !strings.Contains(body, `**Lakeshore Nursing**`) || !strings.Contains(body, "(https://www.lakeshore-poly.example/programs/nursing/)") ||
		regexp.MustCompile(`From \[[^\]]*\]\(https://www\.lakeshore-poly\.example/(?:[^p]|p[^r])`).MatchString(body) {
		t.Errorf("the nursing assistant's stream lacks its name or its page, or cites another: %s", body)
	}

	status, body, err = s.call(http.MethodPost, "/v1/retrieve", testClientKey, `{"model":"admissions","query":"what are the admission requirements for nursing?"}`)
	if err != nil || status != 200 {
		t.Fatalf("retrieve: %d %s %v", status, body, err)
	}
	var res struct{ Pages []struct{ URL string } }
	json.Unmarshal([]byte(body), &res)
	if len(res.Pages) == 0 {
		t.Fatalf("admissions retrieved nothing: %s", body)
	}
	for _, p := range res.Pages {
		if !strings.HasPrefix(p.URL, examples.BaseURL+"admissions/") {
			t.Errorf("admissions retrieved %s", p.URL)
		}
	}

	status, body, err = s.call(http.MethodGet, "/metrics", "", "")
	if err != nil || status != 200 {
		t.Fatalf("metrics: %d %v", status, err)
	}
	if !strings.Contains(body, `gen_ai_request_model="nursing"`) {
		t.Errorf("no metric is labelled with the assistant's name")
	}
}

// TestEvalAssistant evaluates the example questions as a section assistant, inline and from a file: the report
// names it, and only its pages are searched.
func TestEvalAssistant(t *testing.T) {
	noBackendsEnv(t)
	site, idx := exampleSite(t)
	out := captureStdout(t)
	ctx := context.Background()
	if err := run(ctx, []string{"ingest", site, "--base-url", examples.BaseURL, "--index", idx}); err != nil {
		t.Fatal(err)
	}
	out()
	questions := writeFile(t, "q.jsonl", string(examples.Questions))
	file := writeFile(t, "assistants.yaml", "- name: admissions\n  prefixes: [/admissions/]\n")
	t.Setenv("RAGPROXY_ASSISTANTS", file)
	hit8 := map[string]float64{}
	for _, tt := range []struct{ spec, prefix string }{{"", ""}, {"admissions", "/admissions/"}, {"nursing=/programs/nursing/", "/programs/nursing/"}} {
		spec := tt.spec
		report := filepath.Join(t.TempDir(), "report.json")
		args := []string{"eval", "--index", idx, "--questions", questions, "--ablations=false", "--json", report}
		if spec != "" {
			args = append(args, "--assistant", spec)
		}
		if err := run(ctx, args); err != nil {
			t.Fatalf("eval --assistant %q: %v", spec, err)
		}
		md := string(out())
		b, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Assistant string
			Retrieval struct {
				Hit    map[string]float64
				Misses []struct{ Got []string }
			}
		}
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		hit8[spec] = rep.Retrieval.Hit["8"]
		if spec == "" {
			if rep.Assistant != "" || strings.Contains(md, "Section assistant") {
				t.Errorf("whole-site report names an assistant %q", rep.Assistant)
			}
			continue
		}
		name, _, _ := strings.Cut(spec, "=")
		if !strings.HasPrefix(rep.Assistant, name+" (") || !strings.Contains(md, "Section assistant "+name) {
			t.Errorf("report of %q names assistant %q", spec, rep.Assistant)
		}
		for _, m := range rep.Retrieval.Misses {
			for _, u := range m.Got {
				if !strings.HasPrefix(u, tt.prefix) { // the report gives paths
					t.Errorf("%s retrieved %s", name, u)
				}
			}
		}
	}
	if hit8["nursing=/programs/nursing/"] >= hit8[""] {
		t.Errorf("Hit@8 as the nursing assistant %.3f is not below the whole site's %.3f", hit8["nursing=/programs/nursing/"], hit8[""])
	}
	if err := run(ctx, []string{"eval", "--index", idx, "--questions", questions, "--assistant", "nobody"}); !errors.Is(err, grounding.ErrAssistant) ||
		!strings.Contains(err.Error(), "defines admissions") {
		t.Errorf("eval --assistant nobody = %v", err)
	}
}

// TestReloadKeepsAssistantPages re-ingests the site without the pages of an assistant's prefix: the reload keeps
// the served version (the assistant would know nothing), and the assistant still answers from its pages.
func TestReloadKeepsAssistantPages(t *testing.T) {
	t.Setenv("RAGPROXY_ASSISTANTS", "")
	s := startServe(t, "--reload-interval", "0", "--assistant", "lab=/news/2024/nursing-simulation-lab/")
	before := s.version(t)
	if err := os.RemoveAll(filepath.Join(s.site, "news", "2024", "nursing-simulation-lab")); err != nil {
		t.Fatal(err)
	}
	s.ingest(t)
	status, body, err := s.call(http.MethodPost, "/admin/index/reload", testAdminKey, "")
	if err != nil || strings.Contains(body, `"switched":true`) {
		t.Fatalf("reload to a version without the lab's pages: %d %s %v", status, body, err)
	}
	if v := s.version(t); v != before {
		t.Errorf("the server switched to %s", v)
	}
	status, body, err = s.call(http.MethodPost, "/v1/retrieve", testClientKey, `{"model":"lab","query":"what is the simulation lab?"}`)
	if err != nil || status != 200 || !strings.Contains(body, "/news/2024/nursing-simulation-lab/") {
		t.Errorf("the lab assistant after the refused reload: %d %.300s %v", status, body, err)
	}
}

// TestAssistantsWarnUnlabelledQdrant serves assistants over Qdrant collections whose points lack url_prefixes
// (as an earlier release synced them): serve counts and warns, and an ingest with this release sets the payload.
func TestAssistantsWarnUnlabelledQdrant(t *testing.T) {
	noBackendsEnv(t)
	t.Setenv("RAGPROXY_ASSISTANTS", "")
	ctx := context.Background()
	_, url := qdranttest.NewServer(t)
	site, idx := exampleSite(t)
	captureStdout(t)
	ingest := func() {
		t.Helper()
		if err := run(ctx, []string{"ingest", site, "--base-url", examples.BaseURL, "--index", idx, "--qdrant-url", url}); err != nil {
			t.Fatal(err)
		}
	}
	ingest()
	ix, err := index.Load(idx)
	if err != nil {
		t.Fatal(err)
	}
	store, err := qdrant.New(qdrant.Config{URL: url, Name: "lakeshore"})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if err := stripPrefixes(ctx, url, store, ix.Manifest.Version); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	unlabelled := func(args ...string) int {
		t.Helper()
		f, err := parseServeFlags(append([]string{"--index", idx, "--qdrant-url", url}, args...))
		if err != nil {
			t.Fatal(err)
		}
		bk, closeBackends, err := f.backends.Open(ctx, idx, ix, logger)
		if err != nil {
			t.Fatal(err)
		}
		defer closeBackends()
		return f.assistants.list.CheckQdrant(bk, ix, logger)
	}
	if n := unlabelled("--assistant", "nursing=/programs/nursing/"); n != len(ix.Pages) {
		t.Errorf("unlabelled pages = %d, want %d", n, len(ix.Pages))
	}
	if n := unlabelled(); n != 0 {
		t.Errorf("without assistants: %d unlabelled pages reported", n)
	}
	ingest()
	if n := unlabelled("--assistant", "nursing=/programs/nursing/"); n != 0 {
		t.Errorf("after an ingest with this release: %d unlabelled pages", n)
	}
}

// stripPrefixes removes url_prefixes from every point of the version's collections.
func stripPrefixes(ctx context.Context, rawURL string, store *qdrant.Store, version string) error {
	u, err := neturl.Parse(rawURL)
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return err
	}
	client, err := qc.NewClient(&qc.Config{Host: u.Hostname(), Port: port, SkipCompatibilityCheck: true})
	if err != nil {
		return err
	}
	defer client.Close()
	sum, ch := store.VersionCollections(version)
	for _, coll := range []string{sum, ch} {
		_, err := client.DeletePayload(ctx, &qc.DeletePayloadPoints{CollectionName: coll, Wait: qc.PtrOf(true),
			Keys: []string{"url_prefixes"}, PointsSelector: qc.NewPointsSelectorFilter(&qc.Filter{})})
		if err != nil {
			return err
		}
	}
	return nil
}
