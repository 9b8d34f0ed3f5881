// Package admin is the gateway's admin API under /admin, for the index a server answers from: hot reload of new
// index versions (polled, on a signal, on request), the pages of the served version and the operator's edits of
// them, ingest jobs, and the versions on disk to switch back to. It hands the gateway its routes (Routes) and
// runs its background work under the caller's context (Run). An Admin is safe for concurrent use.
package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ragproxy/ragproxy/backends"
	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest"
	"github.com/ragproxy/ragproxy/ingest/crawl"
	"github.com/ragproxy/ragproxy/observability"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/siteurl"
)

// Admin serves the admin API's index routes: the served index and its reloads, the pages of the served
// version, the operator's edits (put and delete pages), ingest jobs and the versions on disk. Every change is
// written into the served index directory and then loaded by the reloader, so it is live when the call returns
// (or, for a job, when the job ends).
//
// Changes are serialised: edits and activations wait for each other, and while an ingest job runs (one at a
// time) they answer 409, since the job's version would replace theirs.
type Admin struct {
	dir      string
	rl       *reloader
	cfg      Config
	logger   *slog.Logger
	starts   chan jobStart // to Run, which runs the jobs
	stopping chan struct{} // closed when Run's context has ended: no job starts after

	write sync.Mutex // held while something writes into dir

	mu      sync.Mutex
	jobs    []*job // the latest maxJobs, oldest first
	running *job
}

// Config is what the admin API needs of the server it is part of. Dir, Live and Open are required; the zero
// value of every other field works. It holds no secrets: the upstream's keys stay in the funcs that use them.
type Config struct {
	// Dir is the served index directory, which edits, jobs and activations write and reloads read. Required.
	Dir string
	// Live is the index version being served, which reloads switch. Required.
	Live *retrieval.Live
	// Open loads the version CURRENT names with its backends, for a reload while Live serves; release closes
	// them once the version is replaced and its last search has ended. Required.
	Open func(ctx context.Context) (r *retrieval.Retriever, release func(), err error)
	// Name is the assistant's model id, the index metrics' label; default "".
	Name string
	// Logger logs reloads, jobs and backend syncs; nil discards.
	Logger *slog.Logger
	// Metrics counts reloads and publishes the served version; nil counts nothing.
	Metrics *observability.Metrics
	// ReloadInterval is how often Run checks the directory's CURRENT and switches to a new version; 0 checks
	// only on Signals and POST /admin/index/reload.
	ReloadInterval time.Duration
	// Signals, when not nil, asks for a reload on every value received until Run ends (serve relays SIGHUP);
	// nil: none.
	Signals <-chan os.Signal
	// Edit returns the ingest settings of an edit: embedder, summarizer, versions kept and the ragproxy version
	// the manifest records; the admin API sets the directory, logger and protected version. Nil: ingest's
	// defaults (the local embedder, extractive summaries).
	Edit func() (ingest.Config, error)
	// ParseIngest parses an ingest job's command line (SOURCE then the options of `ragproxy ingest`, always with
	// --index Dir), writing usage to out; nil refuses jobs.
	ParseIngest func(args []string, out io.Writer) (*Ingest, error)
	// Jobs bounds what an ingest job may ask for; the zero value allows the options of DefaultJobOptions, public
	// addresses and no directories.
	Jobs JobPolicy
	// Sync writes the index under dir into the configured backends after an edit; nil: none are configured.
	Sync func(ctx context.Context, dir string) (*backends.SyncReport, error)
}

// New returns the admin API of the index that cfg.Live serves. Its routes answer at once; its watcher, signals
// and jobs need Run.
func New(cfg Config) (*Admin, error) {
	if cfg.Dir == "" || cfg.Live == nil || cfg.Open == nil {
		return nil, errors.New("admin: Dir, Live and Open are required")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	rl := &reloader{dir: cfg.Dir, live: cfg.Live, open: cfg.Open, logger: logger, metrics: cfg.Metrics, name: cfg.Name,
		loadedAt: time.Now()}
	rl.seen, _ = index.Current(cfg.Dir)
	return &Admin{dir: cfg.Dir, rl: rl, cfg: cfg, logger: logger, starts: make(chan jobStart),
		stopping: make(chan struct{})}, nil
}

// Run runs the admin API's background work until ctx ends: the watcher of CURRENT, the reloads Signals ask for,
// and the ingest jobs, which run under ctx. When ctx ends no job starts any more, and Run returns once the
// running job (cancelled with ctx) and the watcher have ended. Call it once.
func (a *Admin) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(a.stopping) // before the wait: a job asked for meanwhile is refused, not left waiting
	if a.cfg.ReloadInterval > 0 {
		wg.Go(func() { a.rl.watch(ctx, a.cfg.ReloadInterval) })
	}
	if a.cfg.Signals != nil {
		wg.Go(func() { a.rl.onSignal(ctx, a.cfg.Signals) })
	}
	for {
		select {
		case <-ctx.Done():
			return
		case s := <-a.starts:
			if ctx.Err() != nil {
				s.started <- false
				return
			}
			wg.Go(func() { a.runJob(ctx, s.job, s.in) })
			s.started <- true
		}
	}
}

// Routes are the admin routes, relative to /admin, for server.Config.Admin.
func (a *Admin) Routes() []server.Route {
	return append(a.rl.routes(), a.routes()...)
}

// routes are the admin routes besides the reloader's.
func (a *Admin) routes() []server.Route {
	return []server.Route{
		{Method: http.MethodGet, Path: "/pages", Handle: a.listPages},
		{Method: http.MethodPut, Path: "/pages", Handle: a.putPage},
		{Method: http.MethodGet, Path: "/pages/*", Handle: a.getPage},
		{Method: http.MethodDelete, Path: "/pages/*", Handle: a.deletePage},
		{Method: http.MethodGet, Path: "/edits", Handle: a.listEdits},
		{Method: http.MethodDelete, Path: "/edits/*", Handle: a.forgetEdit},
		{Method: http.MethodPost, Path: "/ingest", Handle: a.startJob, Status: http.StatusAccepted},
		{Method: http.MethodGet, Path: "/jobs", Handle: a.listJobs},
		{Method: http.MethodGet, Path: "/jobs/:id", Handle: a.getJob},
		{Method: http.MethodDelete, Path: "/jobs/:id", Handle: a.cancelJob},
		{Method: http.MethodGet, Path: "/versions", Handle: a.listVersions},
		{Method: http.MethodPost, Path: "/versions/:version/activate", Handle: a.activate},
	}
}

// Admin API errors beyond the generic ones.
func notFound(code, format string, args ...any) *compat.APIError {
	return &compat.APIError{Status: http.StatusNotFound, Type: compat.TypeInvalidRequest, Code: code,
		Message: fmt.Sprintf(format, args...)}
}

func conflict(code, format string, args ...any) *compat.APIError {
	return &compat.APIError{Status: http.StatusConflict, Type: compat.TypeInvalidRequest, Code: code,
		Message: fmt.Sprintf(format, args...)}
}

// served is the index version answers come from now.
// served returns the served index, for its records: its texts may be closed by a reload at any time.
func (a *Admin) served() *index.Index { return a.rl.live.Current().Index() }

// acquire returns the served index, held until release is called, for reading its texts: a reload meanwhile
// closes it only after.
func (a *Admin) acquire() (ix *index.Index, release func()) {
	r, release := a.rl.live.Acquire()
	return r.Index(), release
}

// pageView is a page as the admin API shows it; the single-page GET adds the markdown, chunks and links.
type pageView struct {
	Object    string `json:"object"`
	URL       string `json:"url"`
	Title     string `json:"title"`
	Hash      string `json:"hash"`
	Section   string `json:"section,omitempty"`
	Summary   string `json:"summary"`
	Community int    `json:"community"`
	Component int    `json:"component"`
	Chunks    int    `json:"chunks"`
	Links     int    `json:"links"`
	// FAQ counts the FAQ entries the page marks up.
	FAQ int `json:"faq"`
	// Edit is "put" for a page the admin API put.
	Edit string `json:"edit,omitempty"`

	Markdown   string      `json:"markdown,omitempty"`
	ChunkTexts []chunkView `json:"chunk_texts,omitempty"`
	LinksTo    []string    `json:"links_to,omitempty"`
}

type chunkView struct {
	Ord    int    `json:"ord"`
	Tokens int    `json:"tokens"`
	Text   string `json:"text"`
}

func viewPage(p *index.Page, edits *ingest.Edits) pageView {
	v := pageView{Object: "page", URL: p.URL, Title: p.Title, Hash: p.Hash, Section: p.Section, Summary: p.Summary,
		Community: p.Community, Component: p.Component, Chunks: len(p.Chunks), Links: len(p.Links), FAQ: len(p.FAQ)}
	if _, ok := edits.Put[p.URL]; ok {
		v.Edit = "put"
	}
	return v
}

// pageList is the body of GET /admin/pages.
type pageList struct {
	Object  string     `json:"object"`
	Version string     `json:"version"`
	Data    []pageView `json:"data"`
	Total   int        `json:"total"`
	Offset  int        `json:"offset"`
	Limit   int        `json:"limit"`
	HasMore bool       `json:"has_more"`
}

// Page list limits.
const (
	defaultPageLimit = 100
	maxPageLimit     = 1000
)

// listPages serves GET /admin/pages?prefix=&offset=&limit=: the served version's pages in URL order, those
// whose URL starts with prefix.
func (a *Admin) listPages(_ context.Context, req *server.Request) (any, error) {
	offset, err := queryInt(req.Query, "offset", 0, 0, 1<<31-1)
	if err != nil {
		return nil, err
	}
	limit, err := queryInt(req.Query, "limit", defaultPageLimit, 1, maxPageLimit)
	if err != nil {
		return nil, err
	}
	prefix := req.Query.Get("prefix")
	edits, err := ingest.LoadEdits(a.dir)
	if err != nil {
		return nil, err
	}
	ix, release := a.acquire()
	defer release()
	var match []*index.Page
	for i := range ix.Pages {
		if strings.HasPrefix(ix.Pages[i].URL, prefix) {
			match = append(match, &ix.Pages[i])
		}
	}
	sort.Slice(match, func(i, j int) bool { return match[i].URL < match[j].URL })
	out := pageList{Object: "list", Version: ix.Manifest.Version, Data: []pageView{}, Total: len(match),
		Offset: offset, Limit: limit}
	for _, p := range match[min(offset, len(match)):min(offset+limit, len(match))] {
		out.Data = append(out.Data, viewPage(p, edits))
	}
	out.HasMore = offset+len(out.Data) < len(match)
	return out, nil
}

// queryInt reads an integer query parameter within [lo, hi], def when absent.
func queryInt(q url.Values, name string, def, lo, hi int) (int, error) {
	s := q.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, compat.InvalidRequest(name, "", "%s must be an integer from %d to %d, not %q", name, lo, hi, s)
	}
	return n, nil
}

// pageURL is the page URL a route's path names (percent-encoded, or as it is), in canonical form.
func pageURL(req *server.Request) (string, error) {
	raw := strings.TrimSpace(req.Params["*"])
	if raw == "" {
		return "", compat.InvalidRequest("url", "", "name the page by its URL, percent-encoded: /admin/pages/https%%3A%%2F%%2Fwww.example.org%%2Fa%%2F")
	}
	return canonicalPageURL(raw)
}

// canonicalPageURL checks that raw is an absolute http(s) URL and returns it in the canonical form pages are
// indexed under.
func canonicalPageURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", compat.InvalidRequest("url", "invalid_url", "%q is not an absolute http(s) URL", raw)
	}
	c, ok := crawl.Canonical(nil, raw)
	if !ok {
		return "", compat.InvalidRequest("url", "invalid_url", "%q is not an absolute http(s) URL", raw)
	}
	return c, nil
}

// getPage serves GET /admin/pages/{url}: one page with its markdown, chunks and links.
func (a *Admin) getPage(_ context.Context, req *server.Request) (any, error) {
	u, err := pageURL(req)
	if err != nil {
		return nil, err
	}
	edits, err := ingest.LoadEdits(a.dir)
	if err != nil {
		return nil, err
	}
	ix, release := a.acquire()
	defer release()
	p, ok := ix.PageByURL(u)
	if !ok {
		return nil, notFound("page_not_found", "The served index (version %s) has no page %s.", ix.Manifest.Version, u)
	}
	v := viewPage(p, edits)
	if v.Markdown, err = ix.PageMarkdown(p.ID); err != nil {
		return nil, err
	}
	for _, id := range p.Chunks {
		c := ix.Chunks[id]
		text, err := ix.ChunkText(id)
		if err != nil {
			return nil, err
		}
		v.ChunkTexts = append(v.ChunkTexts, chunkView{Ord: c.Ord, Tokens: c.Tokens, Text: text})
	}
	for _, l := range p.Links {
		v.LinksTo = append(v.LinksTo, ix.Pages[l].URL)
	}
	return v, nil
}

// putRequest is the body of PUT /admin/pages.
type putRequest struct {
	URL      string `json:"url"`
	Title    string `json:"title"`
	HTML     string `json:"html"`
	Markdown string `json:"markdown"`
}

// editResult is the body of a page edit's answer: the version that serves it.
type editResult struct {
	Object   string `json:"object"`
	URL      string `json:"url"`
	Version  string `json:"version"`
	Previous string `json:"previous,omitempty"`
	// Switched says the edit changed the served version (putting a page as it is changes nothing).
	Switched bool  `json:"switched"`
	Pages    int   `json:"pages"`
	Chunks   int   `json:"chunks"`
	Reused   int   `json:"reused"`
	TookMS   int64 `json:"took_ms"`
}

// putPage serves PUT /admin/pages: the page is added to the index, or replaces the page at its URL, and stays
// across later ingests until it is deleted or its edit forgotten.
func (a *Admin) putPage(ctx context.Context, req *server.Request) (any, error) {
	var in putRequest
	if err := compat.DecodeStrict(req.Body, &in); err != nil {
		return nil, err
	}
	if in.URL == "" {
		return nil, compat.InvalidRequest("url", "", "url is required: the page's absolute URL on the site")
	}
	if (in.HTML == "") == (in.Markdown == "") {
		return nil, compat.InvalidRequest("html", "", "give the page's content as exactly one of html and markdown")
	}
	u, err := canonicalPageURL(in.URL)
	if err != nil {
		return nil, err
	}
	req.Log("url", u)
	if err := a.onSite(u); err != nil {
		return nil, err
	}
	p := ingest.PutPage{URL: u, Title: in.Title, HTML: in.HTML, Markdown: in.Markdown,
		Edit: ingest.Edit{At: time.Now().UTC(), By: req.Key}}
	if err := ingest.CheckPut(a.dir, p); err != nil {
		if errors.Is(err, ingest.ErrNoContent) {
			return nil, compat.InvalidRequest("html", "no_content", "The page has no readable content: %v", err)
		}
		return nil, err
	}
	return a.edit(ctx, req, "page.put", u, func(e *ingest.Edits) { e.PutPage(p) })
}

// onSite checks that u is on one of the hosts of the served pages: the admin API edits the site's index, it
// does not add other sites to it.
func (a *Admin) onSite(u string) error {
	host := siteurl.HostOf(u)
	ix := a.served()
	hosts := map[string]bool{}
	for _, p := range ix.Pages {
		hosts[siteurl.HostOf(p.URL)] = true
	}
	if !hosts[host] {
		names := slices.Sorted(maps.Keys(hosts))
		return compat.InvalidRequest("url", "off_site", "%s is not on the site's hosts (%s)", u, strings.Join(names, ", "))
	}
	return nil
}

// deletePage serves DELETE /admin/pages/{url}: the page leaves the index, and later ingests leave it out until
// the edit is forgotten.
func (a *Admin) deletePage(ctx context.Context, req *server.Request) (any, error) {
	u, err := pageURL(req)
	if err != nil {
		return nil, err
	}
	req.Log("url", u)
	if _, ok := a.served().PageByURL(u); !ok {
		return nil, notFound("page_not_found", "The served index (version %s) has no page %s.", a.served().Manifest.Version, u)
	}
	return a.edit(ctx, req, "page.deleted", u, func(e *ingest.Edits) {
		e.Delete(u, ingest.Edit{At: time.Now().UTC(), By: req.Key})
	})
}

// edit applies change to the saved edits, makes the new index version and serves it.
func (a *Admin) edit(ctx context.Context, req *server.Request, object, u string, change func(*ingest.Edits)) (any, error) {
	start := time.Now()
	if err := a.lockWrite(); err != nil {
		return nil, err
	}
	defer a.write.Unlock()
	saved, err := ingest.LoadEdits(a.dir)
	if err != nil {
		return nil, err
	}
	edits := saved.Clone()
	change(edits)
	cfg, err := a.applyConfig()
	if err != nil {
		return nil, err
	}
	rep, err := ingest.Apply(ctx, cfg, edits)
	if errors.Is(err, ingest.ErrNoPages) {
		return nil, compat.InvalidRequest("url", "last_page", "%s is the index's last page: an index needs one", u)
	}
	if errors.Is(err, ingest.ErrModels) {
		return nil, conflict("index_models", "The edit needs the models the index was built with: %v", err)
	}
	if err != nil {
		return nil, err
	}
	res, err := a.publish(ctx, "admin edit")
	if err != nil {
		return nil, err
	}
	req.Log("version", res.Version, "previous", res.Previous)
	return editResult{Object: object, URL: u, Version: res.Version, Previous: res.Previous, Switched: res.Switched,
		Pages: res.Pages, Chunks: res.Chunks, Reused: rep.Reused, TookMS: time.Since(start).Milliseconds()}, nil
}

// lockWrite takes the write lock for an edit or an activation, or refuses while an ingest job runs.
func (a *Admin) lockWrite() error {
	a.mu.Lock()
	j := a.running
	a.mu.Unlock()
	if j != nil {
		return conflict("job_running", "Ingest job %s is running; its version would replace this change. Try again when it has ended (GET /admin/jobs/%s).", j.id, j.id)
	}
	a.write.Lock()
	return nil
}

// applyConfig is the ingest configuration of an edit: Config.Edit's, with the served version protected.
func (a *Admin) applyConfig() (ingest.Config, error) {
	var cfg ingest.Config
	if a.cfg.Edit != nil {
		var err error
		if cfg, err = a.cfg.Edit(); err != nil {
			return cfg, err
		}
	}
	cfg.IndexDir, cfg.Logger, cfg.ProtectVersions = a.dir, a.logger, []string{a.served().Manifest.Version}
	return cfg, nil
}

// publish syncs the backends with the index just written and switches to it. Both run to their end whatever the
// request does: the version is written, and a client that left must not leave it unserved until the watcher
// notices.
func (a *Admin) publish(ctx context.Context, reason string) (reloadResult, error) {
	ctx = context.WithoutCancel(ctx)
	if a.cfg.Sync != nil {
		synced, err := a.cfg.Sync(ctx, a.dir)
		if err != nil {
			return reloadResult{}, fmt.Errorf("the index is written but its backends are not synced (the server keeps its version until they are): %w", err)
		}
		if synced != nil {
			for _, line := range synced.Lines() {
				a.logger.Info("backends synced", "detail", line)
			}
		}
	}
	res, err := a.rl.reload(ctx, reason)
	if err != nil {
		return res, conflict("index_not_loaded", "The new version is written but could not be loaded; the server still serves version %s: %v",
			a.served().Manifest.Version, err)
	}
	return res, nil
}

// editView is one saved edit, as GET /admin/edits lists it.
type editView struct {
	URL   string    `json:"url"`
	Kind  string    `json:"kind"`
	Title string    `json:"title,omitempty"`
	At    time.Time `json:"at"`
	By    string    `json:"by,omitempty"`
}

// listEdits serves GET /admin/edits: the saved edits, in URL order.
func (a *Admin) listEdits(context.Context, *server.Request) (any, error) {
	e, err := ingest.LoadEdits(a.dir)
	if err != nil {
		return nil, err
	}
	data := []editView{}
	for u, p := range e.Put {
		data = append(data, editView{URL: u, Kind: "put", Title: p.Title, At: p.At, By: p.By})
	}
	for u, d := range e.Deleted {
		data = append(data, editView{URL: u, Kind: "deleted", At: d.At, By: d.By})
	}
	sort.Slice(data, func(i, j int) bool { return data[i].URL < data[j].URL })
	return map[string]any{"object": "list", "data": data}, nil
}

// forgetEdit serves DELETE /admin/edits/{url}: the URL is handed back to the site. The served version does not
// change; the next ingest reads the URL from the site again (or not, if the site has no such page).
func (a *Admin) forgetEdit(_ context.Context, req *server.Request) (any, error) {
	u, err := pageURL(req)
	if err != nil {
		return nil, err
	}
	req.Log("url", u)
	if err := a.lockWrite(); err != nil {
		return nil, err
	}
	defer a.write.Unlock()
	e, err := ingest.LoadEdits(a.dir)
	if err != nil {
		return nil, err
	}
	if !e.Forget(u) {
		return nil, notFound("edit_not_found", "No edit of %s is saved.", u)
	}
	if err := ingest.SaveEdits(a.dir, e); err != nil {
		return nil, err
	}
	return map[string]any{"object": "edit.forgotten", "url": u}, nil
}

// versionView is one version on disk, as GET /admin/versions lists it.
type versionView struct {
	Version     string    `json:"version"`
	Current     bool      `json:"current"`
	Served      bool      `json:"served"`
	BuiltAt     time.Time `json:"built_at"`
	Pages       int       `json:"pages"`
	Chunks      int       `json:"chunks"`
	Links       int       `json:"links"`
	Communities int       `json:"communities"`
	Embedder    string    `json:"embedder"`
	Summarizer  string    `json:"summarizer"`
	Source      string    `json:"source"`
	Ragproxy    string    `json:"ragproxy_version"`
}

// listVersions serves GET /admin/versions: the complete versions on disk, newest first; current is the one
// CURRENT names, served the one this server answers from (they differ while a version waits to load).
func (a *Admin) listVersions(context.Context, *server.Request) (any, error) {
	vs, err := index.Versions(a.dir)
	if err != nil {
		return nil, err
	}
	served := a.served().Manifest.Version
	out := struct {
		Object  string        `json:"object"`
		Current string        `json:"current"`
		Served  string        `json:"served"`
		Data    []versionView `json:"data"`
	}{Object: "list", Served: served, Data: []versionView{}}
	for _, v := range vs {
		m := v.Manifest
		if v.Current {
			out.Current = v.Version
		}
		out.Data = append(out.Data, versionView{Version: v.Version, Current: v.Current, Served: v.Version == served,
			BuiltAt: m.BuiltAt, Pages: m.Pages, Chunks: m.Chunks, Links: m.Links, Communities: m.Communities,
			Embedder: m.Embedder, Summarizer: m.Summarizer, Source: m.Source, Ragproxy: m.RagproxyVersion})
	}
	return out, nil
}

// activate serves POST /admin/versions/{version}/activate: CURRENT names the version again and the server
// switches to it. When it cannot be loaded, CURRENT goes back to what it named and the served version stays.
// The saved edits are not changed: the next ingest applies them again.
func (a *Admin) activate(ctx context.Context, req *server.Request) (any, error) {
	v := req.Params["version"]
	req.Log("version", v)
	if err := a.lockWrite(); err != nil {
		return nil, err
	}
	defer a.write.Unlock()
	before, err := index.Current(a.dir)
	if err != nil {
		return nil, err
	}
	if err := index.Activate(a.dir, v); err != nil {
		if errors.Is(err, index.ErrUnknownVersion) {
			return nil, notFound("version_not_found", "The index directory holds no complete version %q (GET /admin/versions lists them).", v)
		}
		return nil, err
	}
	// The switch runs to its end whatever the request does, as an edit's.
	res, err := a.rl.reload(context.WithoutCancel(ctx), "admin activate")
	if err != nil {
		if rerr := index.Activate(a.dir, strings.TrimPrefix(before, "v-")); rerr != nil {
			a.logger.Error("could not point CURRENT back after a failed activation", "current", before, "err", rerr)
		}
		return nil, conflict("index_not_loaded", "Version %s could not be loaded; the server still serves version %s: %v",
			v, a.served().Manifest.Version, err)
	}
	req.Log("previous", res.Previous)
	res.Object = "index.version.activate"
	return res, nil
}
