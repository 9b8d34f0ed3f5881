package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/internal/corpustest"
)

// BenchmarkScale measures what serving costs as the site grows, on the Berkeley guide and on ten copies of it
// (corpustest.TenFold), offline, with the ragproxy binary as an operator runs it: ingest's wall time, CPU time and
// peak resident memory; serve's time from start to a ready /readyz and its resident memory once loaded; and
// /v1/retrieve's p50 and p99 over the dev questions. One iteration is the whole measurement, so run it with
// -benchtime 1x. The ten-fold corpus takes about 900 MB of temporary space and a minute to ingest.
func BenchmarkScale(b *testing.B) {
	bin := filepath.Join(b.TempDir(), "ragproxy")
	// Built as README's deploy section builds the release: the binary's own pages are part of serve's memory.
	if out, err := exec.Command("go", "build", "-trimpath", "-tags", "grpcnotrace", "-ldflags", "-s -w", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	questions := corpustest.Questions(b)
	for _, c := range []struct {
		name string
		dir  func(testing.TB) string
	}{
		{"copies=1", corpustest.Dir},
		{"copies=10", corpustest.TenFold},
	} {
		b.Run(c.name, func(b *testing.B) {
			src := c.dir(b)
			for b.Loop() {
				idx := filepath.Join(b.TempDir(), "scale")
				start := time.Now()
				ing := exec.Command(bin, "ingest", src, "--base-url", corpustest.BaseURL, "--index", idx)
				ing.Env = offlineEnv()
				if out, err := ing.CombinedOutput(); err != nil {
					b.Fatalf("ingest: %v\n%s", err, tail(out))
				}
				b.ReportMetric(time.Since(start).Seconds(), "ingest-s")
				b.ReportMetric(cpuSeconds(ing.ProcessState), "ingest-cpu-s")
				b.ReportMetric(float64(ing.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)/1024, "ingest-peak-MB")

				addr := freeAddr(b)
				start = time.Now()
				srv := exec.Command(bin, "serve", "--index", idx, "--listen", addr, "--log-level", "error", "--reload-interval", "0")
				srv.Env = offlineEnv()
				if err := srv.Start(); err != nil {
					b.Fatal(err)
				}
				waitReady(b, "http://"+addr)
				b.ReportMetric(time.Since(start).Seconds(), "serve-start-s")
				b.ReportMetric(residentMB(b, srv.Process.Pid), "serve-rss-MB")
				var took []time.Duration
				for range 3 {
					for _, q := range questions {
						body, _ := json.Marshal(map[string]string{"query": q.Question})
						t0 := time.Now()
						resp, err := http.Post("http://"+addr+"/v1/retrieve", "application/json", strings.NewReader(string(body)))
						if err != nil || resp.StatusCode != http.StatusOK {
							b.Fatalf("retrieve %q: %v %v", q.Question, err, resp)
						}
						resp.Body.Close()
						took = append(took, time.Since(t0))
					}
				}
				slices.Sort(took)
				ms := func(q float64) float64 { return float64(took[int(q*float64(len(took)-1))].Microseconds()) / 1000 }
				b.ReportMetric(ms(0.5), "retrieve-p50-ms")
				b.ReportMetric(ms(0.99), "retrieve-p99-ms")
				b.ReportMetric(residentMB(b, srv.Process.Pid), "serve-rss-after-MB")
				srv.Process.Signal(syscall.SIGTERM)
				srv.Wait()
			}
		})
	}
}

func offlineEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENAI_API_KEY=") && !strings.HasPrefix(kv, "QDRANT_") && !strings.HasPrefix(kv, "NEO4J_") &&
			!strings.HasPrefix(kv, "REDIS_URL=") {
			env = append(env, kv)
		}
	}
	return env
}

func freeAddr(tb testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func waitReady(tb testing.TB, base string) {
	for i := 0; i < 6000; i++ {
		if r, err := http.Get(base + "/readyz"); err == nil {
			r.Body.Close()
			if r.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	tb.Fatal("serve was not ready within a minute")
}

// residentMB is a process's resident set size (VmRSS) in MiB.
func residentMB(tb testing.TB, pid int) float64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return float64(kb) / 1024
		}
	}
	tb.Fatal("no VmRSS")
	return 0
}

func cpuSeconds(ps *os.ProcessState) float64 { return (ps.UserTime() + ps.SystemTime()).Seconds() }

func tail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
