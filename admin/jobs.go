package admin

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ragproxy/ragproxy/backends"
	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/ingest"
	"github.com/ragproxy/ragproxy/server"
)

// Job states.
const (
	jobQueued    = "queued" // waiting for an edit in progress to end
	jobRunning   = "running"
	jobSucceeded = "succeeded"
	jobFailed    = "failed"
	jobCancelled = "cancelled"
)

// maxJobs is how many jobs the server remembers, the running one included.
const maxJobs = 20

// job is one ingest started through the admin API. Its fields after mu are guarded by it.
type job struct {
	id      string
	source  string
	args    []string
	by      string
	created time.Time
	// stop is closed by cancel, done when the job has ended.
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}

	mu                sync.Mutex
	state             string
	started, finished time.Time
	progress          []ingest.Progress
	report            *ingest.Report
	backends          *backends.SyncReport
	reload            *reloadResult
	err               error
}

// jobView is a job as the admin API shows it.
type jobView struct {
	Object     string               `json:"object"`
	ID         string               `json:"id"`
	State      string               `json:"state"`
	Source     string               `json:"source"`
	Args       []string             `json:"args"`
	By         string               `json:"by,omitempty"`
	CreatedAt  time.Time            `json:"created_at"`
	StartedAt  *time.Time           `json:"started_at,omitempty"`
	FinishedAt *time.Time           `json:"finished_at,omitempty"`
	Progress   []ingest.Progress    `json:"progress"`
	Report     *ingest.Report       `json:"report,omitempty"`
	Backends   *backends.SyncReport `json:"backends,omitempty"`
	Reload     *reloadResult        `json:"reload,omitempty"`
	Error      *jobError            `json:"error,omitempty"`
}

type jobError struct {
	Message string `json:"message"`
}

func (j *job) view() jobView {
	j.mu.Lock()
	defer j.mu.Unlock()
	v := jobView{Object: "ingest.job", ID: j.id, State: j.state, Source: j.source, Args: j.args, By: j.by,
		CreatedAt: j.created, Progress: slices.Clone(j.progress), Report: j.report, Backends: j.backends, Reload: j.reload}
	if v.Progress == nil {
		v.Progress = []ingest.Progress{}
	}
	if !j.started.IsZero() {
		v.StartedAt = &j.started
	}
	if !j.finished.IsZero() {
		v.FinishedAt = &j.finished
	}
	if j.err != nil {
		v.Error = &jobError{Message: j.err.Error()}
	}
	return v
}

// cancel asks the job to end; a job that has ended already stays as it is.
func (j *job) cancel() { j.stopOnce.Do(func() { close(j.stop) }) }

// onProgress keeps the latest progress of each stage.
func (j *job) onProgress(p ingest.Progress) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := range j.progress {
		if j.progress[i].Stage == p.Stage {
			j.progress[i] = p
			return
		}
	}
	j.progress = append(j.progress, p)
}

// ingestRequest is the body of POST /admin/ingest: SOURCE and the options of `ragproxy ingest`, named as its
// flags without the dashes ({"base-url": "https://...", "max-pages": 200, "section": ["/a/", "/b/"],
// "full": true}). The index is always the served one.
type ingestRequest struct {
	Source  string                     `json:"source"`
	Options map[string]json.RawMessage `json:"options"`
}

// JobPolicy is what the operator lets ingest jobs ask for. Admin keys belong to the site's editors, the server's
// settings to whoever deployed it: a job that could choose the upstream, a backend or the models would send the
// deployment's keys (OPENAI_API_KEY, QDRANT_API_KEY, NEO4J_PASSWORD) wherever it named, one that could crawl
// private addresses would put an intranet page into the public index, and one that could read any directory
// would publish the server's files. So a job takes only the options that describe the site unless the operator
// allows more.
type JobPolicy struct {
	// Options are the option names a job may set; nil: DefaultJobOptions. "allow-private" is never allowed
	// here, only by AllowPrivate.
	Options []string
	// AllowPrivate lets a job set allow-private, crawling private and loopback addresses.
	AllowPrivate bool
	// MirrorRoot is the directory under which a job's source may be a directory of saved pages; "" refuses
	// directories.
	MirrorRoot string
}

// DefaultJobOptions are the options that describe the site: where it is and which part of it, how deep and how
// fast to crawl it, how to read and cut its pages, and whether to start afresh.
func DefaultJobOptions() []string {
	return []string{"base-url", "section", "prefix", "depth", "max-pages", "max-page-bytes", "delay", "max-crawl-delay",
		"no-sitemaps", "trust-lastmod", "content-selector", "remove-selector",
		"chunk-min-tokens", "chunk-h3-tokens", "chunk-h4-tokens", "chunk-two-blank-tokens", "chunk-list-item-tokens",
		"chunk-blank-tokens", "chunk-drop-tokens", "chunk-max-tokens", "full"}
}

// check refuses what the policy does not allow of a request: an option outside it, private addresses, a
// directory outside the mirror root.
func (p JobPolicy) check(in ingestRequest) error {
	allowed := p.Options
	if allowed == nil {
		allowed = DefaultJobOptions()
	}
	for _, name := range slices.Sorted(maps.Keys(in.Options)) {
		switch {
		case name == "index" || name == "json":
			return compat.InvalidRequest("options."+name, "", "option %q cannot be set here: a job writes the served index and reports as JSON", name)
		case name == "allow-private":
			if !p.AllowPrivate {
				return compat.InvalidRequest("options."+name, "invalid_option", "Option %q is refused: this server's jobs crawl public addresses only (the operator allows private ones with --allow-private-ingest).", name)
			}
		case !slices.Contains(allowed, name):
			return compat.InvalidRequest("options."+name, "invalid_option", "Option %q is refused: jobs take only %s (the operator allows more with --admin-ingest-options).", name, strings.Join(allowed, ", "))
		}
	}
	if u, err := url.Parse(in.Source); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		return nil
	}
	if p.MirrorRoot == "" {
		return compat.InvalidRequest("source", "invalid_option", "source must be an http(s) start URL: this server's jobs read no directories (the operator allows a directory of saved pages under --admin-mirror-root).")
	}
	if !under(p.MirrorRoot, in.Source) {
		return compat.InvalidRequest("source", "invalid_option", "source %q is neither an http(s) start URL nor a directory under the mirror root.", in.Source)
	}
	return nil
}

// under reports whether path, its links followed, is root or inside it.
func under(root, path string) bool {
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	if r, err = filepath.Abs(r); err != nil {
		return false
	}
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	if p, err = filepath.Abs(p); err != nil {
		return false
	}
	rel, err := filepath.Rel(r, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(os.PathSeparator)) || filepath.IsAbs(rel) {
		return false
	}
	return true
}

// ingestArgs turns the request into ingest's command line.
func (in ingestRequest) ingestArgs() ([]string, error) {
	if strings.TrimSpace(in.Source) == "" || strings.HasPrefix(in.Source, "-") {
		return nil, compat.InvalidRequest("source", "", "source is required: a start URL to crawl, or a directory of saved pages (with the option base-url)")
	}
	args := []string{in.Source}
	for _, name := range slices.Sorted(maps.Keys(in.Options)) {
		var v any
		d := json.NewDecoder(bytes.NewReader(in.Options[name]))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return nil, compat.InvalidJSON(err)
		}
		values := []any{v}
		if list, ok := v.([]any); ok {
			values = list
		}
		for _, x := range values {
			switch x := x.(type) {
			case string:
				args = append(args, "--"+name+"="+x)
			case json.Number:
				args = append(args, "--"+name+"="+x.String())
			case bool:
				args = append(args, fmt.Sprintf("--%s=%t", name, x))
			default:
				return nil, compat.InvalidRequest("options."+name, "", "option %q must be a string, number, boolean or a list of them", name)
			}
		}
	}
	return args, nil
}

// Ingest is the work of one ingest job, as Config.ParseIngest makes it from the job's command line.
type Ingest struct {
	// Config is the ingest's; the job sets its Logger, OnProgress and ProtectVersions.
	Config ingest.Config
	// Sync writes the new version into the backends after the ingest; nil: no backends, and the job reports
	// none.
	Sync func(ctx context.Context, dir string) (*backends.SyncReport, error)
}

// Run ingests and then syncs the backends. The report is nil when the ingest failed; a failed sync returns the
// report with the error, the local index being written.
func (in *Ingest) Run(ctx context.Context) (*ingest.Report, *backends.SyncReport, error) {
	rep, err := ingest.Run(ctx, in.Config)
	if err != nil {
		return nil, nil, err
	}
	if in.Sync == nil {
		return rep, nil, nil
	}
	synced, err := in.Sync(ctx, in.Config.IndexDir)
	return rep, synced, err
}

// jobStart asks Run to run a job; started answers whether it does.
type jobStart struct {
	job     *job
	in      *Ingest
	started chan bool
}

// startJob serves POST /admin/ingest: it parses the options as `ragproxy ingest` does and starts the job in the
// background, or refuses with 409 while another runs.
func (a *Admin) startJob(ctx context.Context, req *server.Request) (any, error) {
	var in ingestRequest
	if err := compat.DecodeStrict(req.Body, &in); err != nil {
		return nil, err
	}
	args, err := in.ingestArgs()
	if err != nil {
		return nil, err
	}
	if err := a.cfg.Jobs.check(in); err != nil {
		return nil, err
	}
	if a.cfg.ParseIngest == nil {
		return nil, compat.InvalidRequest("source", "jobs_disabled", "This server runs no ingest jobs.")
	}
	var usage bytes.Buffer
	opts, err := a.cfg.ParseIngest(append(slices.Clone(args), "--index", a.dir), &usage)
	if err != nil {
		return nil, compat.InvalidRequest("options", "invalid_option", "%v", err)
	}
	id, err := newJobID()
	if err != nil {
		return nil, err
	}
	j := &job{id: id, source: in.Source, args: args, by: req.Key, created: time.Now().UTC(), state: jobQueued,
		stop: make(chan struct{}), done: make(chan struct{})}
	a.mu.Lock()
	if r := a.running; r != nil {
		a.mu.Unlock()
		return nil, conflict("job_running", "Ingest job %s is running; one job runs at a time (DELETE /admin/jobs/%s cancels it).", r.id, r.id)
	}
	a.running = j // held while Run is asked, so that no second job starts meanwhile
	a.mu.Unlock()
	s := jobStart{job: j, in: opts, started: make(chan bool, 1)}
	started := false
	select {
	case a.starts <- s:
		started = <-s.started
	case <-a.stopping:
	case <-ctx.Done():
	}
	a.mu.Lock()
	if !started {
		a.running = nil
		a.mu.Unlock()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, compat.Unavailable("The server is shutting down.")
	}
	a.jobs = append(a.jobs, j)
	if len(a.jobs) > maxJobs {
		a.jobs = slices.Delete(a.jobs, 0, len(a.jobs)-maxJobs)
	}
	a.mu.Unlock()
	req.Log("job", id, "source", in.Source, "args", strings.Join(args, " "))
	return j.view(), nil
}

// runJob runs j to its end: ingest into the served directory, backends, then the switch to the new version.
// The ingest and the sync run until they end or ctx (the server's lifetime) ends or the job is cancelled; the
// switch runs under ctx alone, as a cancel after the version is written would leave it unserved.
func (a *Admin) runJob(ctx context.Context, j *job, in *Ingest) {
	defer close(j.done)
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // ends with the job at the latest
		select {
		case <-j.stop:
			cancel()
		case <-jctx.Done():
		}
	}()
	a.write.Lock()
	defer a.write.Unlock()
	log := a.logger.With("job", j.id)
	j.mu.Lock()
	j.state, j.started = jobRunning, time.Now().UTC()
	j.mu.Unlock()
	log.Info("ingest job started", "source", j.source, "args", strings.Join(j.args, " "))

	cfg := in.Config
	cfg.Logger = log
	cfg.OnProgress = j.onProgress
	cfg.ProtectVersions = []string{a.served().Manifest.Version}
	rep, synced, err := (&Ingest{Config: cfg, Sync: in.Sync}).Run(jctx)
	var res *reloadResult
	if err == nil {
		var r reloadResult
		if r, err = a.rl.reload(ctx, "admin ingest job "+j.id); err == nil {
			res = &r
		} else {
			err = fmt.Errorf("the new version is written but could not be loaded; the server still serves version %s: %w",
				a.served().Manifest.Version, err)
		}
	}

	j.mu.Lock()
	j.finished, j.report, j.reload, j.err = time.Now().UTC(), rep, res, err
	j.backends = synced
	switch {
	case err == nil:
		j.state = jobSucceeded
	case errors.Is(err, context.Canceled):
		j.state = jobCancelled
	default:
		j.state = jobFailed
	}
	state := j.state
	j.mu.Unlock()
	a.mu.Lock()
	a.running = nil
	a.mu.Unlock()
	if err != nil {
		log.Warn("ingest job ended", "state", state, "err", err)
		return
	}
	log.Info("ingest job ended", "state", state, "version", res.Version, "switched", res.Switched,
		"pages", rep.Pages, "reused", rep.Reused, "removed", rep.Removed)
}

// newJobID returns a random job id.
func newJobID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("job id: %w", err)
	}
	return "job-" + hex.EncodeToString(b[:]), nil
}

// findJob returns the remembered job named by the route's id.
func (a *Admin) findJob(req *server.Request) (*job, error) {
	id := req.Params["id"]
	req.Log("job", id)
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, j := range a.jobs {
		if j.id == id {
			return j, nil
		}
	}
	return nil, notFound("job_not_found", "No job %q (the server remembers its last %d jobs until it restarts).", id, maxJobs)
}

// getJob serves GET /admin/jobs/{id}.
func (a *Admin) getJob(_ context.Context, req *server.Request) (any, error) {
	j, err := a.findJob(req)
	if err != nil {
		return nil, err
	}
	return j.view(), nil
}

// listJobs serves GET /admin/jobs: the remembered jobs, newest first.
func (a *Admin) listJobs(context.Context, *server.Request) (any, error) {
	a.mu.Lock()
	jobs := slices.Clone(a.jobs)
	a.mu.Unlock()
	data := make([]jobView, 0, len(jobs))
	for i := len(jobs) - 1; i >= 0; i-- {
		data = append(data, jobs[i].view())
	}
	return map[string]any{"object": "list", "data": data}, nil
}

// cancelJob serves DELETE /admin/jobs/{id}: a queued or running job is cancelled (it ends soon after, and the
// served version stays); an ended job is answered as it is.
func (a *Admin) cancelJob(_ context.Context, req *server.Request) (any, error) {
	j, err := a.findJob(req)
	if err != nil {
		return nil, err
	}
	j.cancel()
	return j.view(), nil
}
