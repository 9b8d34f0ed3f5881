package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/tidwall/gjson"

	"github.com/ragproxy/ragproxy/compat"
)

// Endpoint is one OpenAI-compatible server.
type Endpoint struct {
	// Name labels the upstream in errors, logs and metrics ("primary", "fallback").
	Name string
	// BaseURL is the API root including /v1, e.g. https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent as the bearer token; empty sends none.
	APIKey string
	// Model is the model asked for when the client's request names no
	// upstream model (it used an alias). On a fallback upstream it always
	// replaces the client's model, since the fallback serves other models.
	Model string
	// Pacer, when set, paces the requests sent with APIKey by the upstream's
	// rate-limit headers, and rate-limit refusals wait it out (up to its
	// MaxRateWaits) instead of counting as retries; share one Pacer among
	// everything that sends with the key. Default nil: no pacing, for
	// requests a client waits on.
	Pacer *Pacer
}

// Redacted returns u with the API key masked, for logging.
func (u Endpoint) Redacted() Endpoint {
	if u.APIKey != "" {
		u.APIKey = "REDACTED"
	}
	return u
}

// Config configures a Client. The zero value of every field but Primary
// works.
type Config struct {
	// Primary is the upstream tried first.
	Primary Endpoint
	// Fallback is tried when the primary keeps failing; ignored when its
	// BaseURL is empty.
	Fallback Endpoint
	// Retries is how many times each upstream is retried after a retryable
	// failure before moving on. Default 1; negative means no retries.
	Retries int
	// Backoff is the pause before a retry or a failover. Default 200ms.
	Backoff time.Duration
	// MaxRetryAfter is the longest Retry-After (sent with 429 and 503) a retry
	// of the same upstream waits for; an upstream that asks for longer is not
	// retried, and the fallback, if any, is tried at once. Default 5s.
	MaxRetryAfter time.Duration
	// FirstByteTimeout bounds each attempt from sending the request until
	// the response headers and, for streams, the first event arrive.
	// Default 2m.
	FirstByteTimeout time.Duration
	// StreamIdleTimeout bounds the wait for each next piece of a stream once
	// its first event arrived; a stalled stream then ends with a 504 error.
	// Default 1m.
	StreamIdleTimeout time.Duration
	// MaxEventBytes bounds one line of an upstream stream (an event's data);
	// a longer one ends the stream with a 502 error instead of growing memory
	// without bound. Default 4 MiB.
	MaxEventBytes int
	// MaxIdleConnsPerHost sizes the keep-alive pool per upstream. Default 64.
	MaxIdleConnsPerHost int
	// HTTPClient, when set, replaces the tuned default client.
	HTTPClient *http.Client
}

// Redacted returns c with keys masked, for logging.
func (c Config) Redacted() Config {
	c.Primary = c.Primary.Redacted()
	c.Fallback = c.Fallback.Redacted()
	return c
}

// Client sends chat requests upstream with retry and failover. It is safe for
// concurrent use.
type Client struct {
	cfg     Config
	targets []target
	// readers are the streams' read buffers, used again from one stream to the next.
	readers sync.Pool
}

// target is one configured Endpoint with its SDK client.
type target struct {
	Endpoint
	fallback bool
	api      openai.Client
}

// New returns a client for cfg.
func New(cfg Config) (*Client, error) {
	if cfg.Primary.BaseURL == "" {
		return nil, errors.New("new upstream client: primary base URL is empty")
	}
	if cfg.Retries == 0 {
		cfg.Retries = 1
	} else if cfg.Retries < 0 {
		cfg.Retries = 0
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = 200 * time.Millisecond
	}
	if cfg.MaxRetryAfter == 0 {
		cfg.MaxRetryAfter = 5 * time.Second
	}
	if cfg.FirstByteTimeout == 0 {
		cfg.FirstByteTimeout = 2 * time.Minute
	}
	if cfg.StreamIdleTimeout <= 0 {
		cfg.StreamIdleTimeout = time.Minute
	}
	if cfg.MaxEventBytes <= 0 {
		cfg.MaxEventBytes = 4 << 20
	}
	if cfg.MaxIdleConnsPerHost == 0 {
		cfg.MaxIdleConnsPerHost = 64
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: NewTransport(cfg.MaxIdleConnsPerHost)}
	}
	c := &Client{cfg: cfg}
	add := func(u Endpoint, fallback bool, name string) {
		if u.Name == "" {
			u.Name = name
		}
		c.targets = append(c.targets, target{Endpoint: u, fallback: fallback, api: openai.NewClient(
			option.WithBaseURL(u.BaseURL),
			option.WithAPIKey(u.APIKey),
			option.WithHTTPClient(hc),
			// Retries are ours: the SDK's would retry after bytes reached the
			// client and ignore the fallback.
			option.WithMaxRetries(0),
			option.WithMiddleware(InMemoryBody),
		)})
	}
	add(cfg.Primary, false, "primary")
	if cfg.Fallback.BaseURL != "" {
		add(cfg.Fallback, true, "fallback")
	}
	return c, nil
}

// NewTransport returns an http.Transport tuned for many concurrent streams to
// a few upstream hosts. Over HTTP/1.1 its buffers are larger than net/http's 4 KB: a grounded request (the
// question with its passages, often 8 to 20 KB) goes out in one write rather than its headers and then its
// body, and the chunks of an answer that arrived together are read in one call (a loopback stream of 20 chunks:
// 2.3 reads a request with 4 KB, 1.35 with 16 KB).
func NewTransport(maxIdlePerHost int) *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          4 * maxIdlePerHost,
		MaxIdleConnsPerHost:   maxIdlePerHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		ReadBufferSize:        16 << 10,
		WriteBufferSize:       32 << 10,
	}
}

// Call is one chat request to send upstream.
type Call struct {
	// Request is the decoded client request.
	Request *compat.ChatRequest
	// Model is the upstream model to ask for; "" means the upstream's
	// configured Model (the client used an alias or sent none).
	Model string
	// Messages, when non-nil, replaces the client's messages.
	Messages json.RawMessage
}

func (u *target) model(call *Call) string {
	if u.fallback && u.Model != "" {
		return u.Model
	}
	if call.Model != "" {
		return call.Model
	}
	return u.Model
}

// Complete sends a non-stream request and returns the upstream's body.
func (c *Client) Complete(ctx context.Context, call *Call) ([]byte, Served, error) {
	var body []byte
	served, err := c.try(ctx, call, func(ctx context.Context, release func(), _ func() bool, u *target, payload []byte) error {
		defer release()
		var res *http.Response
		err := u.api.Post(ctx, "chat/completions", nil, &res, option.WithRequestBody("application/json", payload))
		if err != nil {
			return err
		}
		u.Pacer.Observe(res.Header)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			return fmt.Errorf("read completion: %w", err)
		}
		if err := checkCompletion(u.Name, b); err != nil {
			return err
		}
		body = b
		return nil
	})
	return body, served, err
}

// Stream sends a streaming request and returns once the first event has
// arrived, so failures before any content (connection drops, timeouts, 429,
// 5xx) are retried and failed over. The caller must Close the stream.
func (c *Client) Stream(ctx context.Context, call *Call) (*Stream, Served, error) {
	var st *Stream
	served, err := c.try(ctx, call, func(ctx context.Context, release func(), detach func() bool, u *target, payload []byte) error {
		var res *http.Response
		err := u.api.Post(ctx, "chat/completions", nil, &res,
			option.WithRequestBody("application/json", payload),
			option.WithHeader("Accept", "text/event-stream"))
		if err != nil {
			return err
		}
		u.Pacer.Observe(res.Header)
		s := newStream(res, release, u.Name, c.cfg.MaxEventBytes, &c.readers)
		s.detach = detach
		if !s.peek() {
			err := s.Err()
			s.Close()
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		if first := bytes.TrimLeft(s.Chunk(), " \t\r\n"); !gjson.ValidBytes(first) || first[0] != '{' {
			// A first event that is no chunk: nothing was sent to the client yet, so another attempt can still
			// answer.
			s.Close()
			return compat.UpstreamUnreachable(u.Name, fmt.Errorf("upstream %s: first stream event is not a JSON object", u.Name))
		}
		s.idle(c.cfg.StreamIdleTimeout)
		st = s
		return nil
	})
	return st, served, err
}

// checkCompletion makes sure an upstream's 200 body is a completion: some servers answer an error, or nothing
// usable, with status 200. Such a body fails the attempt like an error status would, so that it is retried and
// failed over instead of reaching the client as a success.
func checkCompletion(name string, body []byte) error {
	if !gjson.ValidBytes(body) {
		return compat.UpstreamUnreachable(name, fmt.Errorf("upstream %s: completion is not JSON", name))
	}
	r := gjson.GetManyBytes(body, "error", "choices")
	if e := r[0]; e.Exists() && e.Type != gjson.Null {
		ae := &compat.APIError{Status: http.StatusBadGateway, Type: compat.TypeServer, Upstream: name, Body: body,
			Message: e.Get("message").String(), Err: fmt.Errorf("upstream %s: error body with status 200", name)}
		if t := e.Get("type").String(); t != "" {
			ae.Type = t
		}
		if ae.Message == "" {
			ae.Message = "The upstream model server answered with an error."
		}
		return ae
	}
	if !r[1].IsArray() || len(r[1].Array()) == 0 {
		return compat.UpstreamUnreachable(name, fmt.Errorf("upstream %s: completion without choices", name))
	}
	return nil
}

// attemptFunc performs one attempt against u. ctx carries the first-byte
// deadline; release ends ctx. On success the attempt either called release
// or handed it to what it returned (a Stream calls it on Close). detach makes
// ctx stop following the caller's context (it reports false when that had
// ended already), so that what the attempt left running can finish on its own
// after the caller's request ended; release still ends it.
type attemptFunc func(ctx context.Context, release func(), detach func() bool, u *target, payload []byte) error

// errFirstByteTimeout cancels an attempt that got no first byte in time.
var errFirstByteTimeout = errors.New("first byte timeout")

// try sends the call to each upstream in turn, retrying retryable failures,
// until one answers. The Served it returns lists every attempt, also on
// error.
func (c *Client) try(ctx context.Context, call *Call, attempt attemptFunc) (Served, error) {
	var served Served
	var last error
	payloads := map[string][]byte{}
	for i := range c.targets {
		u := &c.targets[i]
		model := u.model(call)
		payload, ok := payloads[model]
		if !ok {
			b, err := call.Request.UpstreamBody(model, call.Messages)
			if err == nil {
				b, err = forModel(model, b)
			}
			if err != nil {
				return served, err
			}
			payload, payloads[model] = b, b
		}
		rateWaits, paced := 0, false
		for try := 0; try <= c.cfg.Retries; try++ {
			if len(served.Attempts) > 0 && !paced {
				wait := c.cfg.Backoff
				if try > 0 {
					if d, ok := retryAfter(last); ok {
						if d > c.cfg.MaxRetryAfter {
							break // the upstream asks for longer than a request should wait
						}
						wait = max(wait, d)
					}
				}
				if err := sleep(ctx, wait); err != nil {
					return served, err
				}
			}
			ticket, err := u.Pacer.Wait(ctx, estimateTokens(payload))
			if err != nil {
				if ctx.Err() != nil {
					return served, err
				}
				last = err
				break // a stopped key or a wait too long: the fallback, if any, may still answer
			}
			start := time.Now()
			err = c.once(ctx, u, ticket, payload, attempt)
			if err != nil && ctx.Err() != nil {
				// The caller gave up: the attempt was cut short, not failed
				// by the upstream.
				err = ctx.Err()
			}
			served.Attempts = append(served.Attempts, newAttempt(u, err, time.Since(start)))
			if err == nil {
				served.Upstream = u.Name
				return served, nil
			}
			if ctx.Err() != nil {
				return served, err
			}
			last = err
			// paced: the refusal is waited out by the pacer, not by a backoff.
			paced = false
			if u.Pacer.Refused(err) && rateWaits < u.Pacer.maxRateWaits() {
				rateWaits++
				try-- // a rate limit waited out is no retry
				paced = true
				continue
			}
			if Fatal(err) {
				break // no retry clears it; another upstream's key may answer
			}
			if !Retryable(err) {
				return served, err
			}
			var ae *compat.APIError
			if errors.As(err, &ae) && ae.Status == http.StatusGatewayTimeout {
				// An upstream that took the whole timeout is not asked again: that would hold the client for
				// another timeout. The fallback, if any, is tried instead.
				break
			}
		}
	}
	return served, last
}

// once runs one attempt under the first-byte timeout and classifies its error.
func (c *Client) once(ctx context.Context, u *target, ticket *Ticket, payload []byte, attempt attemptFunc) error {
	// The attempt's context follows ctx (its values, and its end, cause included) until it is detached.
	actx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	detach := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	release := func() {
		detach()
		cancel(nil)
	}
	timer := time.AfterFunc(c.cfg.FirstByteTimeout, func() { cancel(errFirstByteTimeout) })
	err := attempt(actx, release, detach, u, payload)
	if err != nil {
		// Classified once: classify reads the error response's body.
		err = classify(u.Name, err)
		var oe *openai.Error
		if errors.As(err, &oe) && oe.Response != nil {
			ticket.Done(oe.Response.Header, err)
		}
	}
	if timer.Stop() {
		if err != nil {
			release()
		}
		return err
	}
	// The timer fired: whatever the attempt returned is cut short.
	release()
	return compat.UpstreamTimeout(u.Name, fmt.Errorf("upstream %s: %w", u.Name, errFirstByteTimeout))
}

// classify turns an attempt's error into a *compat.APIError.
func classify(name string, err error) error {
	var ae *compat.APIError
	if errors.As(err, &ae) {
		return err
	}
	var oe *openai.Error
	if errors.As(err, &oe) {
		out := &compat.APIError{Status: oe.StatusCode, Type: oe.Type, Message: oe.Message, Param: oe.Param, Code: oe.Code,
			Upstream: name, Err: fmt.Errorf("upstream %s: %w", name, err)}
		if oe.Response != nil {
			out.RetryAfter = oe.Response.Header.Get("Retry-After")
			if oe.Response.Body != nil {
				out.Body, _ = io.ReadAll(io.LimitReader(oe.Response.Body, 1<<20))
			}
		}
		if out.Message == "" && len(out.Body) == 0 {
			out.Message = http.StatusText(oe.StatusCode)
			out.Type = compat.TypeServer
		}
		return out
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return compat.UpstreamTimeout(name, fmt.Errorf("upstream %s: %w", name, err))
	}
	return compat.UpstreamUnreachable(name, fmt.Errorf("upstream %s: %w", name, err))
}

// Retryable reports whether err, returned before any byte reached the client,
// may be retried or failed over: connection errors, timeouts, 429 and 5xx.
// A 429 insufficient_quota is not: the key's credit is spent (see Fatal).
func Retryable(err error) bool {
	var ae *compat.APIError
	if !errors.As(err, &ae) || Fatal(err) {
		return false
	}
	return ae.Status == http.StatusTooManyRequests || ae.Status >= 500
}

// refusedUncounted reports whether err is a refusal the upstream answered before counting the request against
// its limits: a 429, or a 400 for the request's shape.
func refusedUncounted(err error) bool {
	var ae *compat.APIError
	return errors.As(err, &ae) && (ae.Status == http.StatusTooManyRequests || ae.Status == http.StatusBadRequest)
}

// estimateTokens is what a chat request counts against a tokens-per-minute
// limit, as the pacer guesses it before the upstream says: about four bytes
// of JSON a token, plus the completion's bound when one is set.
func estimateTokens(payload []byte) int {
	n := len(payload) / 4
	for _, k := range []string{"max_completion_tokens", "max_tokens"} {
		if v := gjson.GetBytes(payload, k); v.Exists() {
			return n + int(v.Int())
		}
	}
	return n
}

// Classify turns an error of the openai-go SDK into a *compat.APIError with
// the upstream's status, type, code, message and Retry-After, naming the
// upstream (name) in it, for callers that send with the SDK themselves (the
// OpenAI embedder) and share a Pacer with a Client.
func Classify(name string, err error) error { return classify(name, err) }

// retryAfter returns the pause an upstream's 429 or 503 asked for in its
// Retry-After header (seconds or an HTTP date).
func retryAfter(err error) (time.Duration, bool) {
	var ae *compat.APIError
	if !errors.As(err, &ae) || ae.RetryAfter == "" ||
		ae.Status != http.StatusTooManyRequests && ae.Status != http.StatusServiceUnavailable {
		return 0, false
	}
	if secs, err := strconv.Atoi(strings.TrimSpace(ae.RetryAfter)); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(ae.RetryAfter); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Models lists the primary upstream's models.
func (c *Client) Models(ctx context.Context) ([]compat.Model, error) {
	u := &c.targets[0]
	page, err := u.api.Models.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list upstream models: %w", classify(u.Name, err))
	}
	out := make([]compat.Model, 0, len(page.Data))
	for _, m := range page.Data {
		out = append(out, compat.NewModel(m.ID, m.OwnedBy, m.Created))
	}
	return out, nil
}
