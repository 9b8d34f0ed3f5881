// Command overhead measures what the proxy adds over calling the upstream
// directly: a loopback fake upstream (compat/openaitest), ragproxy in front
// of it, and streaming clients that read every answer to [DONE]. Both paths
// are measured alternately in one run, in blocks, at each client count, and
// the command prints p50 and p99 of total latency and requests per second.
//
//	go run ./eval/overhead -clients 1,16 -block 1s -rounds 5
package main

import (
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
	flag.Parse()
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

func run(clientList string, block time.Duration, rounds, words int) error {
	answer := strings.TrimSpace(strings.Repeat("word ", words))
	fake := openaitest.NewServer(openaitest.Config{NoRecordBodies: true,
		Reply: func(*openaitest.Request) openaitest.Reply { return openaitest.Reply{Content: answer} }})
	defer fake.Close()

	client, err := upstream.New(upstream.Config{Primary: upstream.Endpoint{BaseURL: fake.URL(), Model: "gpt-4o-mini"}})
	if err != nil {
		return err
	}
	srv := server.New(server.Config{}, client)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	proxyURL := "http://" + ln.Addr().String() + "/v1"

	body := `{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"measure me"}]}`
	fmt.Printf("answer: %d content chunks; block %v x %d rounds per path\n\n", words, block, rounds)
	fmt.Printf("%-8s %-7s %10s %10s %10s %9s\n", "clients", "path", "p50", "p99", "req/s", "requests")
	for _, f := range strings.Split(clientList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("bad client count %q", f)
		}
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n, MaxIdleConns: 2 * n, DisableCompression: true}}
		paths := []struct{ name, url string }{{"direct", fake.URL()}, {"proxy", proxyURL}}
		results := make([]result, len(paths))
		// Warm both paths' connection pools.
		for i := range paths {
			if _, err := load(hc, paths[i].url, body, n, 200*time.Millisecond); err != nil {
				return err
			}
		}
		for r := 0; r < rounds; r++ {
			for i := range paths {
				res, err := load(hc, paths[i].url, body, n, block)
				if err != nil {
					return fmt.Errorf("%s: %w", paths[i].name, err)
				}
				results[i].add(res)
			}
		}
		for i, p := range paths {
			res := results[i]
			fmt.Printf("%-8d %-7s %10s %10s %10.0f %9d\n", n, p.name, res.pct(50), res.pct(99), res.rate(), len(res.lat))
		}
		d, p := results[0], results[1]
		fmt.Printf("%-8d overhead p50 %v, p99 %v; proxy keeps %.0f%% of direct throughput\n\n", n,
			(p.pctD(50) - d.pctD(50)).Round(time.Microsecond), (p.pctD(99) - d.pctD(99)).Round(time.Microsecond), 100*p.rate()/d.rate())
	}
	return nil
}

type result struct {
	lat     []time.Duration
	elapsed time.Duration
}

func (r *result) add(o result) {
	r.lat = append(r.lat, o.lat...)
	r.elapsed += o.elapsed
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
// back to back and reading every answer to the end.
func load(hc *http.Client, url, body string, n int, d time.Duration) (result, error) {
	var mu sync.Mutex
	var res result
	var firstErr error
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 1024)
			buf := make([]byte, 32<<10)
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if err := once(hc, url, body, buf); err != nil {
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

func once(hc *http.Client, url, body string, buf []byte) error {
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
	// Keep the last bytes read to check the stream ended with [DONE].
	var tail []byte
	for {
		k, err := resp.Body.Read(buf)
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
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	if !strings.HasSuffix(string(tail), "data: [DONE]\n\n") {
		return fmt.Errorf("stream did not end with [DONE]: %q", tail)
	}
	return nil
}
