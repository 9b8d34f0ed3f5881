package ingest

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress is how far one stage of a run has got, as Config.OnProgress receives it.
type Progress struct {
	// Stage is "crawled", "cleaned", "chunked", "summarised" or "embedded".
	Stage string `json:"stage"`
	Done  int    `json:"done"`
	// Total is the stage's item count, -1 when it is not known in advance (the crawl).
	Total int `json:"total"`
	// Finished says the stage is over.
	Finished bool `json:"finished"`
}

// progress reports each stage: a progress bar on a terminal, otherwise a log line every few seconds and one at
// the end of the stage; and every update to on, when set.
type progress struct {
	w        io.Writer
	on       func(Progress)
	terminal bool
	every    time.Duration
}

func newProgress(w io.Writer, on func(Progress)) *progress {
	p := &progress{w: w, on: on, every: 5 * time.Second}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.terminal = true
	}
	return p
}

// bar is one stage's progress. A nil *bar, from a silent progress, ignores every call.
type bar struct {
	p     *progress
	name  string
	total int
	pb    *progressbar.ProgressBar

	mu    sync.Mutex
	n     int
	start time.Time
	last  time.Time
}

// stage starts reporting a stage; total < 0 means unknown.
func (p *progress) stage(name string, total int) *bar {
	if p == nil || (p.w == nil && p.on == nil) {
		return nil
	}
	b := &bar{p: p, name: name, total: total, start: time.Now(), last: time.Now()}
	b.report(false)
	if p.terminal {
		b.pb = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(fmt.Sprintf("%-10s", name)),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("items"),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	return b
}

func (b *bar) add(n int) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n += n
	b.report(false)
	switch {
	case b.p.w == nil:
	case b.pb != nil:
		b.pb.Add(n)
	default:
		b.logLine()
	}
}

// report passes the bar's state to the progress callback; b.mu is held or b is not shared yet.
func (b *bar) report(finished bool) {
	if b.p.on != nil {
		b.p.on(Progress{Stage: b.name, Done: b.n, Total: b.total, Finished: finished})
	}
}

// logLine writes a progress line when the last one is old enough; b.mu is held.
func (b *bar) logLine() {
	if now := time.Now(); now.Sub(b.last) >= b.p.every {
		b.last = now
		fmt.Fprintf(b.p.w, "%s: %s\n", b.name, b.count())
	}
}

func (b *bar) done() {
	if b == nil {
		return
	}
	if b.pb != nil {
		b.pb.Finish()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.report(true)
	if b.p.w == nil {
		return
	}
	fmt.Fprintf(b.p.w, "%s: %s in %s\n", b.name, b.count(), time.Since(b.start).Round(time.Millisecond))
}

func (b *bar) count() string {
	if b.total >= 0 {
		return fmt.Sprintf("%d/%d", b.n, b.total)
	}
	return fmt.Sprint(b.n)
}
