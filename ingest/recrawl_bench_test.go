package ingest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/ingest/crawl"
	"github.com/ragproxy/ragproxy/internal/corpustest"
)

// traffic counts what a loopback site served: requests, conditional requests, 304 answers and body bytes.
type traffic struct {
	requests, conditional, notModified, bytes atomic.Int64
}

func (t *traffic) reset() {
	t.requests.Store(0)
	t.conditional.Store(0)
	t.notModified.Store(0)
	t.bytes.Store(0)
}

// countingWriter counts the body bytes and the status a handler writes.
type countingWriter struct {
	http.ResponseWriter
	t *traffic
}

func (w countingWriter) WriteHeader(code int) {
	if code == http.StatusNotModified {
		w.t.notModified.Add(1)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w countingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.t.bytes.Add(int64(n))
	return n, err
}

// counted wraps h so that t counts its traffic.
func counted(t *traffic, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.requests.Add(1)
		if r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "" {
			t.conditional.Add(1)
		}
		h.ServeHTTP(countingWriter{w, t}, r)
	})
}

// serveBerkeley serves the corpus directory as the web root, as a static host would: the site's robots.txt at
// /robots.txt, and every file with a Last-Modified (http.FileServer's, from the file's time) and an ETag made of
// its time and size, the way nginx makes one. http.ServeContent answers matching conditionals with 304.
func serveBerkeley(dir string, t *traffic) *httptest.Server {
	files := http.FileServer(http.Dir(dir))
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		p := filepath.Join(dir, filepath.FromSlash(path.Clean("/"+r.URL.Path)))
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			p = filepath.Join(p, "index.html")
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			w.Header().Set("ETag", fmt.Sprintf(`"%x-%x"`, st.ModTime().Unix(), st.Size()))
		}
		files.ServeHTTP(w, r)
	})
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(dir, "2016-17", "robots.txt"))
	})
	return httptest.NewServer(counted(t, mux))
}

// BenchmarkRecrawlLoopback ingests the Berkeley guide over loopback twice, a first crawl into an empty index and
// an unchanged re-crawl over it, and reports for each the requests made, the conditional ones, the 304 answers,
// the bytes fetched and the wall time of the run.
func BenchmarkRecrawlLoopback(b *testing.B) {
	src := corpustest.Dir(b)
	var tr traffic
	srv := serveBerkeley(src, &tr)
	defer srv.Close()
	cfg := Config{Source: srv.URL + "/2016-17/", Logger: quiet(),
		Crawl: crawl.Config{AllowPrivate: true, Delay: crawl.NoDelay, HTTPClient: srv.Client()}}
	var full, again [5]float64 // requests, conditional, 304, bytes, seconds
	runs := 0
	measure := func(into *[5]float64) *Report {
		tr.reset()
		t0 := time.Now()
		rep, err := Run(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		into[4] += time.Since(t0).Seconds()
		into[0] += float64(tr.requests.Load())
		into[1] += float64(tr.conditional.Load())
		into[2] += float64(tr.notModified.Load())
		into[3] += float64(tr.bytes.Load())
		return rep
	}
	for b.Loop() {
		cfg.IndexDir = filepath.Join(b.TempDir(), "ix")
		first := measure(&full)
		second := measure(&again)
		if second.Changed || second.Version != first.Version || second.Pages != first.Pages {
			b.Fatalf("unchanged re-crawl: %+v after %+v", second, first)
		}
		runs++
	}
	n := float64(runs)
	for _, m := range []struct {
		name string
		v    *[5]float64
	}{{"full", &full}, {"recrawl", &again}} {
		b.ReportMetric(m.v[0]/n, m.name+"-requests/op")
		b.ReportMetric(m.v[1]/n, m.name+"-conditional/op")
		b.ReportMetric(m.v[2]/n, m.name+"-304/op")
		b.ReportMetric(m.v[3]/n/1e6, m.name+"-MB/op")
		b.ReportMetric(m.v[4]/n, m.name+"-wall-s/op")
	}
}
