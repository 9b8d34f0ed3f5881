package ingest

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/internal/corpustest"
)

// cpuTime is the user and system CPU time of the process. The machine is shared, so wall time alone says little;
// CPU seconds per run is the figure to compare.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchRun ingests the Berkeley mirror into dir.
func benchRun(b *testing.B, dir string) *Report {
	b.Helper()
	rep, err := Run(context.Background(), Config{Source: corpustest.Dir(b), BaseURL: corpusBase, IndexDir: dir,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	return rep
}

// report records pages/s of wall time and CPU seconds per run.
func report(b *testing.B, pages int, wall, cpu time.Duration, runs int) {
	b.ReportMetric(float64(pages)/wall.Seconds(), "pages/s")
	b.ReportMetric(cpu.Seconds()/float64(runs), "cpu-s/op")
}

// BenchmarkIngestMirror is a first build of the whole corpus: local embedder, extractive summaries.
func BenchmarkIngestMirror(b *testing.B) {
	b.ReportAllocs()
	pages, runs := 0, 0
	var wall, cpu time.Duration
	for b.Loop() {
		dir := filepath.Join(b.TempDir(), "ix")
		c0 := cpuTime(b)
		rep := benchRun(b, dir)
		cpu += cpuTime(b) - c0
		pages += rep.Fetched
		wall += rep.Duration
		runs++
	}
	report(b, pages, wall, cpu, runs)
}

// BenchmarkReingestMirror re-ingests the unchanged corpus over an index built before the timer started.
func BenchmarkReingestMirror(b *testing.B) {
	b.ReportAllocs()
	dir := filepath.Join(b.TempDir(), "ix")
	benchRun(b, dir)
	pages, runs := 0, 0
	var wall, cpu time.Duration
	for b.Loop() {
		c0 := cpuTime(b)
		rep := benchRun(b, dir)
		cpu += cpuTime(b) - c0
		if rep.Reused != rep.Pages || rep.Embedded != 0 {
			b.Fatalf("re-ingest reused %d of %d pages and embedded %d texts", rep.Reused, rep.Pages, rep.Embedded)
		}
		pages += rep.Fetched
		wall += rep.Duration
		runs++
	}
	report(b, pages, wall, cpu, runs)
}
