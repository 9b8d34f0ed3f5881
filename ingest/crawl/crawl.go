// Package crawl fetches the pages of one website, either over HTTP from a start
// URL (Crawl) or from a local directory of saved pages (ReadMirror), and hands
// each HTML or PDF page to a callback with its canonical URL and the same-site
// links it contains.
//
// Canonical (see canonical.go) defines the URL form that identifies a page
// throughout ingest. The functions in this package keep no state between calls
// and are safe for concurrent use; each call serialises its own emit callback.
package crawl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/temoto/robotstxt"
	"golang.org/x/sync/errgroup"
)

// UserAgent is the User-Agent header the crawler sends and the agent name it
// looks up in robots.txt.
const UserAgent = "ragproxy"

// NoDelay, as Config.Delay, disables the delay between requests (for tests
// against a local server). A robots.txt Crawl-delay still applies.
const NoDelay time.Duration = -1

// Default values used for zero Config fields.
const (
	DefaultMaxDepth    = 15
	DefaultConcurrency = 4
	DefaultDelay       = 100 * time.Millisecond
	DefaultMaxBytes    = 5 << 20
	DefaultTimeout     = 30 * time.Second
	// DefaultMaxPages bounds a crawl: a calendar or query-string trap can make pages without end.
	DefaultMaxPages = 50000
	// DefaultMaxCrawlDelay is the longest robots.txt Crawl-delay honoured; a larger one would stretch a crawl
	// of a few thousand pages over days.
	DefaultMaxCrawlDelay = 10 * time.Second
)

// Page is one fetched page.
type Page struct {
	// URL is the canonical absolute URL of the page, after redirects.
	URL string
	// ContentType is the media type without parameters: "text/html" or "application/pdf".
	ContentType string
	// Body is the raw page.
	Body []byte
	// Links are the canonical URLs of every same-host link in the whole HTML
	// (navigation included), deduplicated, in document order. Nil for PDFs.
	Links []string
}

// Config says what to crawl and how politely. The zero value of every field
// but Start selects the documented default.
type Config struct {
	// Start is the URL the crawl begins at. Required.
	Start string
	// Prefix restricts the crawl to paths that begin with it (e.g. "/en/").
	// Default: the whole host.
	Prefix string
	// MaxDepth is the largest number of links followed from Start. Default 15;
	// negative fetches only Start.
	MaxDepth int
	// Concurrency is the number of requests in flight. Default 4.
	Concurrency int
	// Delay is the minimum time between the starts of two requests to the host.
	// Default 100ms; NoDelay (any negative value) disables it. A larger
	// robots.txt Crawl-delay for UserAgent wins.
	Delay time.Duration
	// MaxBytes is the largest body kept; bigger pages are skipped and counted.
	// Default 5 MiB.
	MaxBytes int64
	// MaxPages stops the crawl after that many pages are emitted. Default DefaultMaxPages; negative means no
	// limit.
	MaxPages int
	// MaxCrawlDelay caps the robots.txt Crawl-delay that replaces Delay. Default DefaultMaxCrawlDelay.
	MaxCrawlDelay time.Duration
	// Timeout bounds each request when HTTPClient is nil. Default 30s.
	Timeout time.Duration
	// AllowPrivate permits private, loopback and link-local addresses (a test
	// site on 127.0.0.1, an intranet). Default false: such connections are
	// refused at dial time, after name resolution.
	AllowPrivate bool
	// HTTPClient is used for every request; its Transport must be nil or an
	// *http.Transport unless AllowPrivate is set. Default: a new client.
	HTTPClient *http.Client
}

func (c Config) withDefaults() Config {
	if c.MaxDepth == 0 {
		c.MaxDepth = DefaultMaxDepth
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Delay == 0 {
		c.Delay = DefaultDelay
	} else if c.Delay < 0 {
		c.Delay = 0
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.MaxPages == 0 {
		c.MaxPages = DefaultMaxPages
	} else if c.MaxPages < 0 {
		c.MaxPages = 0
	}
	if c.MaxCrawlDelay <= 0 {
		c.MaxCrawlDelay = DefaultMaxCrawlDelay
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.Prefix == "" {
		c.Prefix = "/"
	} else if !strings.HasPrefix(c.Prefix, "/") {
		c.Prefix = "/" + c.Prefix
	}
	return c
}

// crawler holds the state of one Crawl call.
type crawler struct {
	cfg    Config
	client *http.Client
	host   string
	robots *robotstxt.Group
	pace   pacer

	mu      sync.Mutex // guards the fields below and serialises emit
	stats   Stats
	seen    map[string]bool // queued or fetched
	emitted map[string]bool
}

// Crawl fetches the pages reachable from cfg.Start on the same host (and under
// cfg.Prefix), breadth first to cfg.MaxDepth, and calls emit for each HTML or
// PDF page. emit is never called concurrently: calls are serialised, so it may
// use unsynchronised state, but a slow emit slows the crawl.
//
// Pages that cannot be used are skipped and counted in Stats, never an error.
// Crawl returns an error for an invalid configuration, or ctx's error (with the
// stats so far) when ctx ends first.
func Crawl(ctx context.Context, cfg Config, emit func(Page)) (Stats, error) {
	cfg = cfg.withDefaults()
	start, ok := Canonical(nil, cfg.Start)
	if !ok {
		return Stats{}, fmt.Errorf("crawl: start URL %q is not an absolute http(s) URL", cfg.Start)
	}
	c := &crawler{
		cfg:     cfg,
		host:    hostOf(start),
		pace:    pacer{delay: cfg.Delay},
		seen:    map[string]bool{start: true},
		emitted: make(map[string]bool),
	}
	client, err := guardedClient(cfg.HTTPClient, c.host, cfg.AllowPrivate, cfg.Timeout)
	if err != nil {
		return Stats{}, err
	}
	c.client = client
	c.robots = c.fetchRobots(ctx, start)
	if c.robots != nil && c.robots.CrawlDelay > c.pace.delay {
		c.pace.delay = max(c.pace.delay, min(c.robots.CrawlDelay, c.cfg.MaxCrawlDelay))
	}

	level := []string{start}
	for depth := 0; len(level) > 0 && depth <= max(cfg.MaxDepth, 0); depth++ {
		level = c.crawlLevel(ctx, level, depth < cfg.MaxDepth, emit)
		if err := ctx.Err(); err != nil {
			return c.stats, fmt.Errorf("crawl: %w", err)
		}
	}
	return c.stats, nil
}

// crawlLevel fetches one breadth-first level and returns the next one.
func (c *crawler) crawlLevel(ctx context.Context, level []string, follow bool, emit func(Page)) []string {
	var next []string
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(c.cfg.Concurrency)
	for _, u := range level {
		if gctx.Err() != nil || c.full() {
			break
		}
		g.Go(func() error {
			p, reason := c.fetch(gctx, u)
			c.mu.Lock()
			defer c.mu.Unlock()
			if gctx.Err() != nil {
				return nil
			}
			switch {
			case reason != "":
				c.stats.skip(reason)
				return nil
			case c.emitted[p.URL]:
				c.stats.skip(SkipDuplicate)
				return nil
			case c.cfg.MaxPages > 0 && c.stats.Pages >= c.cfg.MaxPages:
				return nil
			}
			c.emitted[p.URL] = true
			c.seen[p.URL] = true
			c.stats.Pages++
			emit(p)
			if !follow {
				return nil
			}
			for _, l := range p.Links {
				if c.seen[l] || !strings.HasPrefix(pathOf(l), c.cfg.Prefix) || skipExtension(pathOf(l)) {
					continue
				}
				c.seen[l] = true
				next = append(next, l)
			}
			return nil
		})
	}
	_ = g.Wait() // workers report through stats, never through an error
	return next
}

func (c *crawler) full() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cfg.MaxPages > 0 && c.stats.Pages >= c.cfg.MaxPages
}

// fetch gets one URL. It returns the page, or the reason it was skipped.
func (c *crawler) fetch(ctx context.Context, u string) (Page, SkipReason) {
	if !c.allowed(u) {
		return Page{}, SkipRobots
	}
	if err := c.pace.wait(ctx); err != nil {
		return Page{}, SkipHTTPError
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Page{}, SkipHTTPError
	}
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/pdf;q=0.9,*/*;q=0.1")
	resp, err := c.client.Do(req)
	if err != nil {
		if errors.Is(err, ErrPrivateAddress) {
			return Page{}, SkipPrivate
		}
		return Page{}, SkipHTTPError
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return Page{}, SkipHTTPError
	}
	if resp.StatusCode >= 300 { // a redirect CheckRedirect refused to follow
		return Page{}, SkipOffSite
	}
	final, ok := Canonical(nil, resp.Request.URL.String())
	if !ok || hostOf(final) != c.host || !strings.HasPrefix(pathOf(final), c.cfg.Prefix) {
		return Page{}, SkipOffSite
	}
	if final != u && !c.allowed(final) {
		return Page{}, SkipRobots
	}
	ctype := mediaType(resp.Header.Get("Content-Type"))
	if ctype != "" && kindOf(ctype) == "" {
		return Page{}, SkipContentType
	}
	if resp.ContentLength > c.cfg.MaxBytes {
		return Page{}, SkipTooLarge
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxBytes+1))
	if err != nil {
		return Page{}, SkipReadError
	}
	if int64(len(body)) > c.cfg.MaxBytes {
		return Page{}, SkipTooLarge
	}
	if ctype == "" {
		ctype = mediaType(http.DetectContentType(body))
	}
	kind := kindOf(ctype)
	if kind == "" {
		return Page{}, SkipContentType
	}
	p := Page{URL: final, ContentType: kind, Body: body}
	if kind == "text/html" {
		fu, err := url.Parse(final)
		if err != nil {
			return Page{}, SkipReadError
		}
		p.Links = extractLinks(body, fu, c.host, nil)
	}
	return p, ""
}

// fetchRobots reads robots.txt from the start URL's host. A missing or
// unreachable file allows everything; robotstxt.FromResponse maps a 5xx to
// "disallow all", as its spec asks.
func (c *crawler) fetchRobots(ctx context.Context, start string) *robotstxt.Group {
	u, err := url.Parse(start)
	if err != nil {
		return nil
	}
	u.Path, u.RawQuery = "/robots.txt", ""
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil
	}
	req.Header.Set("User-Agent", UserAgent)
	resp, err := c.client.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	data, err := robotstxt.FromResponse(resp)
	if err != nil {
		return nil
	}
	return data.FindGroup(UserAgent)
}

func (c *crawler) allowed(u string) bool {
	if c.robots == nil {
		return true
	}
	p := pathOf(u)
	if i := strings.IndexByte(u, '?'); i >= 0 {
		p += u[i:]
	}
	return c.robots.Test(p)
}

// mediaType returns the lowercase media type of a Content-Type value.
func mediaType(v string) string {
	if v == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(v)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(strings.SplitN(v, ";", 2)[0]))
	}
	return mt
}

// kindOf maps a media type to the two kinds the crawler keeps, or "".
func kindOf(mt string) string {
	switch mt {
	case "text/html", "application/xhtml+xml":
		return "text/html"
	case "application/pdf", "application/x-pdf":
		return "application/pdf"
	}
	return ""
}

// pacer spaces the starts of requests to one host by delay.
type pacer struct {
	mu    sync.Mutex
	next  time.Time
	delay time.Duration
}

func (p *pacer) wait(ctx context.Context) error {
	if p.delay <= 0 {
		return ctx.Err()
	}
	p.mu.Lock()
	now := time.Now()
	at := p.next
	if at.Before(now) {
		at = now
	}
	p.next = at.Add(p.delay)
	p.mu.Unlock()
	t := time.NewTimer(time.Until(at))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
