package ingest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestProgressFallsBackToLogLines(t *testing.T) {
	var out bytes.Buffer
	p := newProgress(&out, nil)
	if p.terminal {
		t.Fatal("a bytes.Buffer was taken for a terminal")
	}
	p.every = 0 // a line for every update
	b := p.stage("cleaned", 3)
	b.add(1)
	b.add(2)
	b.done()
	u := p.stage("crawled", -1)
	u.add(5)
	u.done()

	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i, l := range lines { // the last line of a stage ends with its duration
		if j := strings.Index(l, " in "); j >= 0 {
			lines[i] = l[:j] + " in D"
		}
	}
	want := []string{"cleaned: 1/3", "cleaned: 3/3", "cleaned: 3/3 in D", "crawled: 5", "crawled: 5 in D"}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("progress lines (-want +got):\n%s", diff)
	}
	if strings.ContainsAny(out.String(), "\r\x1b") {
		t.Errorf("log lines hold terminal control characters: %q", out.String())
	}
}

func TestSilentProgress(t *testing.T) {
	b := newProgress(nil, nil).stage("cleaned", 3)
	b.add(1) // must not panic
	b.done()
	if b != nil {
		t.Error("a nil writer gave a live bar")
	}
}

func TestProgressCallback(t *testing.T) {
	var got []Progress
	p := newProgress(nil, func(p Progress) { got = append(got, p) })
	b := p.stage("chunked", 3)
	b.add(1)
	b.add(2)
	b.done()
	want := []Progress{{Stage: "chunked", Total: 3}, {Stage: "chunked", Done: 1, Total: 3},
		{Stage: "chunked", Done: 3, Total: 3}, {Stage: "chunked", Done: 3, Total: 3, Finished: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress updates (-want +got):\n%s", diff)
	}
}
