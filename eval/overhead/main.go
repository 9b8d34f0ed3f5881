// Command overhead measures what the proxy adds over calling the upstream
// directly: a loopback fake upstream (compat/openaitest), ragproxy in front
// of it, and streaming clients of two kinds: "eof" reads each answer to the end
// of the response body, "sdk" reads it event by event to data: [DONE] and
// closes the body there, as the OpenAI SDKs do, over a keep-alive HTTP/1.1
// connection (Go's client reuses that connection only when the body's end
// arrived with [DONE]). Both paths and both kinds are measured alternately in
// one run, in blocks, at each client count, and the command prints p50 and p99
// of total latency, requests per second, and the write calls the proxy made
// per request on its client connections.
//
//	go run ./eval/overhead -clients 1,16 -block 1s -rounds 5
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ragproxy/ragproxy/compat/openaitest"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/upstream"
)

func main() {
	clients := flag.String("clients", "1,16", "comma-separated concurrent client counts")
	block := flag.Duration("block", time.Second, "length of one measuring block per path")
	rounds := flag.Int("rounds", 5, "blocks per path and client count (alternating)")
	words := flag.Int("words", 20, "words in each streamed answer (one chunk each)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	memprofile := flag.String("memprofile", "", "write an allocation profile of the whole run to this file")
	flag.Parse()
	if *memprofile != "" {
		defer writeHeapProfile(*memprofile)
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "overhead:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "overhead:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*clients, *block, *rounds, *words); err != nil {
		fmt.Fprintln(os.Stderr, "overhead:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

// writeHeapProfile writes the allocations made since the start (go tool pprof -sample_index=alloc_space).
func writeHeapProfile(name string) {
	f, err := os.Create(name)
	if err == nil {
		err = pprof.Lookup("allocs").WriteTo(f, 0)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "overhead:", err)
	}
}

func run(clientList string, block time.Duration, rounds, words int) error {
	answer := strings.TrimSpace(strings.Repeat("word ", words))
	// Each part runs under a profiler label of its own (role=upstream, proxy, client), which the goroutines it
	// starts inherit, so that a CPU profile tells what each costs: go tool pprof -tags, or -tagfocus=role=proxy
	// (the clients' label path tells their two paths apart).
	var fake *openaitest.Server
	pprof.Do(context.Background(), pprof.Labels("role", "upstream"), func(context.Context) {
		fake = openaitest.NewServer(openaitest.Config{NoRecord: true,
			Reply: func(*openaitest.Request) openaitest.Reply { return openaitest.Reply{Content: answer} }})
	})
	defer fake.Close()

	client, err := upstream.New(upstream.Config{Primary: upstream.Endpoint{BaseURL: fake.URL(), Model: "gpt-4o-mini"}})
	if err != nil {
		return err
	}
	srv := server.New(server.Config{}, client)
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ln := &countingListener{Listener: tcp}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	pprof.Do(ctx, pprof.Labels("role", "proxy"), func(ctx context.Context) {
		go func() { done <- srv.Serve(ctx, ln) }()
	})
	defer func() { cancel(); <-done }()
	proxyURL := "http://" + ln.Addr().String() + "/v1"

	body := `{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"measure me"}]}`
	fmt.Printf("answer: %d content chunks; block %v x %d rounds per path\n\n", words, block, rounds)
	fmt.Printf("%-8s %-6s %-7s %10s %10s %10s %9s %12s %6s\n", "clients", "client", "path", "p50", "p99", "req/s", "requests", "writes/req", "conns")
	for _, f := range strings.Split(clientList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("bad client count %q", f)
		}
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxIdleConns: 2 * n, DisableCompression: true}}
		type path struct {
			client, name, url string
			read              func(io.Reader, []byte) error
		}
		var paths []path
		for _, c := range []struct {
			name string
			read func(io.Reader, []byte) error
		}{{"eof", readToEOF}, {"sdk", readToDone}} {
			paths = append(paths, path{c.name, "direct", fake.URL(), c.read}, path{c.name, "proxy", proxyURL, c.read})
		}
		results := make([]result, len(paths))
		// Warm the connection pools.
		for _, p := range paths {
			if _, err := load(hc, p.name, p.url, body, p.read, n, 200*time.Millisecond); err != nil {
				return err
			}
		}
		for r := 0; r < rounds; r++ {
			for i, p := range paths {
				before, conns := ln.writes.Load(), ln.conns.Load()
				res, err := load(hc, p.name, p.url, body, p.read, n, block)
				if err != nil {
					return fmt.Errorf("%s %s: %w", p.client, p.name, err)
				}
				if p.name == "proxy" {
					res.writes, res.conns = ln.writes.Load()-before, ln.conns.Load()-conns
				}
				results[i].add(res)
			}
		}
		for i, p := range paths {
			res := results[i]
			writes, conns := "-", "-"
			if p.name == "proxy" {
				writes, conns = fmt.Sprintf("%.2f", float64(res.writes)/float64(len(res.lat))), fmt.Sprint(res.conns)
			}
			fmt.Printf("%-8d %-6s %-7s %10s %10s %10.0f %9d %12s %6s\n", n, p.client, p.name, res.pct(50), res.pct(99), res.rate(), len(res.lat), writes, conns)
		}
		for i := 0; i < len(paths); i += 2 {
			d, p := results[i], results[i+1]
			fmt.Printf("%-8d %-6s overhead p50 %v, p99 %v; proxy keeps %.0f%% of direct throughput\n", n, paths[i].client,
				(p.pctD(50) - d.pctD(50)).Round(time.Microsecond), (p.pctD(99) - d.pctD(99)).Round(time.Microsecond), 100*p.rate()/d.rate())
		}
		fmt.Println()
		hc.CloseIdleConnections()
	}
	return nil
}

// countingListener counts the Write calls made on the connections it accepts: each is one write system call
// (or more, for a write larger than the socket buffer).
type countingListener struct {
	net.Listener
	writes, conns atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.conns.Add(1)
	return &countingConn{Conn: c, writes: &l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

type result struct {
	lat     []time.Duration
	elapsed time.Duration
	writes  int64
	conns   int64 // connections the proxy accepted
}

func (r *result) add(o result) {
	r.lat = append(r.lat, o.lat...)
	r.elapsed += o.elapsed
	r.writes += o.writes
	r.conns += o.conns
}

func (r *result) pctD(p int) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	s := slices.Clone(r.lat)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func (r *result) pct(p int) string { return r.pctD(p).Round(time.Microsecond).String() }

func (r *result) rate() float64 { return float64(len(r.lat)) / r.elapsed.Seconds() }

// load runs n clients against url for d, each sending streaming requests
// back to back and reading every answer to the end. The clients' profiler
// labels name the path (direct or proxy) beside their role.
func load(hc *http.Client, path, url, body string, read func(io.Reader, []byte) error, n int, d time.Duration) (result, error) {
	var mu sync.Mutex
	var res result
	var firstErr error
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	labels := pprof.WithLabels(context.Background(), pprof.Labels("role", "client", "path", path))
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			pprof.SetGoroutineLabels(labels)
			defer wg.Done()
			lat := make([]time.Duration, 0, 1024)
			buf := make([]byte, 32<<10)
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if err := once(hc, url, body, read, buf); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			res.lat = append(res.lat, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	return res, firstErr
}

func once(hc *http.Client, url, body string, read func(io.Reader, []byte) error, buf []byte) error {
	req, err := http.NewRequest(http.MethodPost, url+"/chat/completions", strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return read(resp.Body, buf)
}

// readToEOF reads the body to its end and checks it ended with [DONE].
func readToEOF(body io.Reader, buf []byte) error {
	// Keep the last bytes read to check the stream ended with [DONE].
	var tail []byte
	for {
		k, err := body.Read(buf)
		tail = append(tail, buf[:k]...)
		if len(tail) > 64 {
			tail = tail[len(tail)-64:]
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if !strings.HasSuffix(string(tail), "data: [DONE]\n\n") {
		return fmt.Errorf("stream did not end with [DONE]: %q", tail)
	}
	return nil
}

// readToDone reads the body line by line and stops at data: [DONE], leaving the rest unread as an SDK does.
func readToDone(body io.Reader, buf []byte) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(buf, len(buf))
	for sc.Scan() {
		if bytes.Equal(sc.Bytes(), []byte("data: [DONE]")) {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return fmt.Errorf("stream ended without [DONE]")
}
