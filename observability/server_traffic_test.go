package observability_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat/openaitest"
)

// call is one HTTP request of the traffic and the status it must get.
type call struct {
	name, method, path, body string
	header                   []string // name, value pairs
	noAuth                   bool
	want                     int
}

// do sends c to the proxy and checks its status; it returns the body.
func (p *proxy) do(ctx context.Context, t *testing.T, c call) string {
	t.Helper()
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(ctx, c.method, p.Base+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if !c.noAuth {
		req.Header.Set("Authorization", "Bearer "+clientKey)
	}
	for i := 0; i+1 < len(c.header); i += 2 {
		req.Header.Set(c.header[i], c.header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s: read body: %v", c.name, err)
	}
	if res.StatusCode != c.want {
		t.Fatalf("%s: status %d, want %d: %.300s", c.name, res.StatusCode, c.want, b)
	}
	if strings.Contains(c.body, `"stream":true`) && c.want == http.StatusOK && !strings.HasSuffix(string(b), "data: [DONE]\n\n") {
		t.Fatalf("%s: stream does not end with [DONE]: %.300s", c.name, b)
	}
	return string(b)
}

// chatBody is a chat request body for the assistant with one user message.
func chatBody(question string, extra string) string {
	return fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":%q}]%s}`, assistant, question, extra)
}

// round sends one round of traffic through the proxy, every request in turn:
// streamed and non-streamed grounded chats, an upstream failure that fails
// over, one that fails on both upstreams, a task request, a cache miss then
// hit, a stream the client abandons, client errors, retrievals (one finding
// nothing), and the model list and probes. n varies the cached question so
// every round has a miss and a hit.
func (p *proxy) round(ctx context.Context, t *testing.T, n int) {
	t.Helper()
	const question = "how much is in-state tuition per semester?"
	chat := "/v1/chat/completions"
	post := func(name, path, body string, want int, header ...string) call {
		return call{name: name, method: http.MethodPost, path: path, body: body, header: header, want: want}
	}
	// A first-turn question that stands on its own makes no analysis call, so
	// the faults queued below hit the answers' upstream calls.
	p.do(ctx, t, post("grounded stream", chat, chatBody(question, `,"stream":true,"stream_options":{"include_usage":true}`), 200))
	p.do(ctx, t, post("grounded completion", chat, chatBody(question, ""), 200))
	// A follow-up is analysed by the model; asked again, its analysis comes
	// from the analysis cache.
	followUp := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":%q},{"role":"assistant","content":"It is $4,850."},`+
		`{"role":"user","content":"and for out-of-state students?"}]}`, assistant, question)
	p.do(ctx, t, post("follow-up", chat, followUp, 200))
	p.do(ctx, t, post("follow-up again", chat, followUp, 200))

	// The primary fails twice (its try and its retry), the fallback answers.
	p.Primary.Fail(openaitest.Fault{Status: http.StatusInternalServerError}, openaitest.Fault{Status: http.StatusTooManyRequests})
	p.do(ctx, t, post("failover", chat, chatBody(question, ""), 200))
	p.Primary.Fail(openaitest.Fault{Status: http.StatusInternalServerError}, openaitest.Fault{Status: http.StatusBadGateway})
	p.do(ctx, t, post("failover stream", chat, chatBody(question, `,"stream":true`), 200))
	// Both upstreams fail: the client gets the last upstream error as sent,
	// a server error or (every other round) a rate limit. Each attempt is
	// counted under its own upstream and outcome: two primary errors, then
	// a fallback error and a fallback error or rate limit.
	last := http.StatusInternalServerError
	if n%2 == 1 {
		last = http.StatusTooManyRequests
	}
	p.Primary.Fail(openaitest.Fault{Status: http.StatusInternalServerError}, openaitest.Fault{Status: http.StatusInternalServerError})
	p.Fallback.Fail(openaitest.Fault{Status: http.StatusInternalServerError}, openaitest.Fault{Status: last})
	p.do(ctx, t, post("both upstreams fail", chat, chatBody(question, ""), last))

	title := `{"model":"` + assistant + `","messages":[{"role":"user","content":"### Task:\nGenerate a concise, 3-5 word title for the chat history."}]}`
	p.do(ctx, t, post("title task", chat, title, 200, "X-OpenWebUI-Task", "title_generation"))

	cached := chatBody(fmt.Sprintf("what does the library offer students (visit %d)?", n), `,"temperature":0`)
	p.do(ctx, t, post("cache miss", chat, cached, 200))
	p.do(ctx, t, post("cache hit", chat, strings.Replace(cached, `"temperature":0`, `"temperature":0,"stream":true`, 1), 200))

	p.do(ctx, t, post("faq direct answer", chat, chatBody("what are the library hours on saturday?", ""), 200))
	p.do(ctx, t, post("faq evidence", chat, chatBody("what are the library's saturday hours in summer?", ""), 200))
	// The index reloader is serve's (cmd/ragproxy), not the server's: count its checks as it does.
	p.Metrics.IndexReload("unchanged")

	p.abandonStream(ctx, t)

	p.do(ctx, t, post("no messages", chat, `{"model":"`+assistant+`","messages":[]}`, http.StatusBadRequest))
	p.do(ctx, t, call{name: "no api key", method: http.MethodPost, path: chat, body: chatBody(question, ""), noAuth: true, want: http.StatusUnauthorized})
	p.do(ctx, t, post("retrieve", "/v1/retrieve", `{"query":"when does the fall semester start?"}`, 200))
	p.do(ctx, t, post("retrieve nothing", "/v1/retrieve", `{"query":"qwxz zzkv"}`, 200))
	p.do(ctx, t, call{name: "models", method: http.MethodGet, path: "/v1/models", want: 200})
	p.do(ctx, t, call{name: "healthz", method: http.MethodGet, path: "/healthz", want: 200})
	p.do(ctx, t, call{name: "readyz", method: http.MethodGet, path: "/readyz", want: 200})
}

// abandonStream starts a stream with a long answer, reads three events and
// hangs up, then waits until the upstream request behind it has ended.
func (p *proxy) abandonStream(ctx context.Context, t *testing.T) {
	t.Helper()
	before := len(p.Primary.Requests())
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	body := chatBody(longAnswerMarker+" about Lakeshore Polytechnic", `,"stream":true`)
	req, err := http.NewRequestWithContext(sctx, http.MethodPost, p.Base+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+clientKey)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("abandoned stream: %v", err)
	}
	r := bufio.NewReader(res.Body)
	for events := 0; events < 3; {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("abandoned stream: read after %d events: %v", events, err)
		}
		if strings.HasPrefix(line, "data: ") {
			events++
		}
	}
	cancel()
	res.Body.Close()
	// The analysis call, then the answer's call: wait for the last one the
	// upstream received to end (cancelled by the proxy).
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	reqs := p.Primary.Requests()
	if len(reqs) <= before {
		t.Fatal("abandoned stream: the upstream saw no request")
	}
	rec, err := p.Primary.Wait(wctx, len(reqs)-1)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Canceled {
		t.Errorf("abandoned stream: the upstream request was not cancelled (%d chunks written)", rec.Chunks)
	}
}
