package server

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"
)

// Backend is one service the server depends on, as /readyz reports it.
type Backend struct {
	// Name names it in /readyz and in the OnProbe callback: "qdrant", "neo4j", "redis".
	Name string
	// Required marks a backend the answers need (Qdrant's searches, Neo4j's communities): while it is down /readyz
	// answers 503 and the pod leaves the load balancer. A backend that is not required (the Redis cache, whose
	// failures only make requests uncached) is reported, and the server stays ready.
	Required bool
	// Probe returns nil when the backend answers.
	Probe func(ctx context.Context) error
}

// ReadinessConfig configures a Readiness.
type ReadinessConfig struct {
	// Backends are probed on each check. Default none: always ready.
	Backends []Backend
	// Timeout bounds each probe, so that a backend that hangs fails the check instead of the probe of the
	// orchestrator (Kubernetes' readiness probe times out after 1 s by default). Default 1s.
	Timeout time.Duration
	// CacheFor is how long a result answers further checks: probes from several load balancers, or an attacker
	// calling /readyz in a loop, cost the backends one round of probes per period. Default 2s.
	CacheFor time.Duration
	// OnProbe, when set, receives each probe's outcome (for a gauge of backend health).
	OnProbe func(name string, up bool)
}

// BackendStatus is one backend's state in a ReadyReport.
type BackendStatus struct {
	Status   string `json:"status"` // "up" or "down"
	Required bool   `json:"required"`
	Error    string `json:"error,omitempty"`
}

// ReadyReport is the outcome of one round of probes.
type ReadyReport struct {
	// Ready is false while a required backend is down.
	Ready    bool
	Backends map[string]BackendStatus
}

// down names the required backends that are down with their errors, sorted, for the 503's message.
func (r ReadyReport) down() string {
	var out []string
	for name, b := range r.Backends {
		if b.Required && b.Status != "up" {
			out = append(out, name+": "+b.Error)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// Readiness probes the backends for /readyz: all at once, each within its timeout, at most once per CacheFor.
// It is safe for concurrent use; checks that arrive while a round runs wait for its result.
type Readiness struct {
	cfg ReadinessConfig
	now func() time.Time

	mu     sync.Mutex
	at     time.Time
	report ReadyReport
}

// NewReadiness returns a Readiness over cfg's backends.
func NewReadiness(cfg ReadinessConfig) *Readiness {
	if cfg.Timeout <= 0 {
		cfg.Timeout = time.Second
	}
	if cfg.CacheFor <= 0 {
		cfg.CacheFor = 2 * time.Second
	}
	return &Readiness{cfg: cfg, now: time.Now}
}

// Check returns the latest report, probing the backends when it is older than CacheFor.
func (r *Readiness) Check(ctx context.Context) ReadyReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.at.IsZero() && r.now().Sub(r.at) < r.cfg.CacheFor {
		return r.report
	}
	errs := make([]error, len(r.cfg.Backends))
	var wg sync.WaitGroup
	for i, b := range r.cfg.Backends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
			defer cancel()
			errs[i] = b.Probe(pctx)
		}()
	}
	wg.Wait()
	rep := ReadyReport{Ready: true, Backends: make(map[string]BackendStatus, len(r.cfg.Backends))}
	for i, b := range r.cfg.Backends {
		st := BackendStatus{Status: "up", Required: b.Required}
		if errs[i] != nil {
			st.Status, st.Error = "down", errs[i].Error()
			if b.Required {
				rep.Ready = false
			}
		}
		rep.Backends[b.Name] = st
		if r.cfg.OnProbe != nil {
			r.cfg.OnProbe(b.Name, errs[i] == nil)
		}
	}
	// A cancelled caller (its client went away) says nothing about the backends: do not keep its round.
	if ctx.Err() == nil {
		r.at, r.report = r.now(), rep
	}
	return rep
}
