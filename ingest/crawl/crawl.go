// Package crawl fetches the pages of one website, either over HTTP from a start
// URL (Crawl) or from a local directory of saved pages (ReadMirror), and hands
// each HTML or PDF page to a callback with its canonical URL and the same-site
// links it contains.
//
// A crawl starts from the start URL and the site's sitemaps, follows HTTP
// redirects and meta refreshes on the same host, records a page that names
// another URL as its canonical under that URL, and, given what an earlier crawl
// learnt (Config.Previous), asks again conditionally so that an unchanged page
// costs a 304 Not Modified instead of its body.
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
	"slices"
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
	// Source is the URL that answered with the page when it is not URL: a page
	// whose <link rel="canonical"> names URL. Empty for a mirror.
	Source string
	// ETag and LastModified are the validators of the response (RFC 9110
	// section 8.8), for the next crawl's conditional requests.
	ETag, LastModified string
	// Fetched is when the response arrived; zero for a mirror.
	Fetched time.Time
	// NotModified says the server answered a conditional request built from
	// Config.Previous with 304 Not Modified (or Config.TrustLastmod spared the
	// request): the page is as the earlier crawl saw it. Body and ContentType
	// are empty; Links are the earlier crawl's.
	NotModified bool
	// Refreshes are the meta refresh pages the crawl passed through on its way
	// to this page, in order.
	Refreshes []Refresh
	// ContentLanguage is the response's Content-Language header (RFC 9110
	// section 8.5) as sent; empty for a mirror or when the server sent none.
	ContentLanguage string
}

// Refresh is a page that answered with a meta refresh to Target.
type Refresh struct {
	URL, Target        string
	ETag, LastModified string
	Fetched            time.Time
}

// Revisit is what an earlier crawl learnt from one URL that answered it: the
// page it was recorded under, or the target of its meta refresh, with the
// response's validators. Config.Previous maps answering URLs to them.
type Revisit struct {
	// Page is the URL the answer was recorded under: the answering URL itself,
	// or the canonical it named. Empty for a meta refresh.
	Page string
	// Refresh is the target of the meta refresh the URL answered with.
	Refresh string
	// ETag and LastModified are sent back as If-None-Match and
	// If-Modified-Since (RFC 9110 sections 13.1.2 and 13.1.3).
	ETag, LastModified string
	// Fetched is when the earlier answer arrived; Config.TrustLastmod
	// compares it with the sitemap's lastmod.
	Fetched time.Time
	// Links are the page's links as the earlier crawl recorded them
	// (Page.Links); a 304 gives them back as the page's links.
	Links []string
}

// conditional reports whether a request built from v can be answered 304.
func (v Revisit) conditional() bool { return v.ETag != "" || v.LastModified != "" }

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
	// *http.Transport unless AllowPrivate is set. Its CheckRedirect, if any,
	// applies to robots.txt and sitemaps; the crawler follows the redirects of
	// pages itself. Default: a new client.
	HTTPClient *http.Client
	// Previous maps the URLs that answered an earlier crawl to what they
	// answered. A request to such a URL carries its validators, and a 304 Not
	// Modified is emitted as a NotModified page built from the Revisit, so an
	// unchanged site costs one bodiless answer per page. Give only what the
	// caller can rebuild the page from. Default: none; every request is
	// unconditional.
	Previous map[string]Revisit
	// TrustLastmod spares the request of a URL in Previous whose sitemap
	// lastmod is not after the earlier Fetched time, emitting it as
	// NotModified. Default false: such a URL is asked conditionally, which
	// costs the server no body either and does not let a stale lastmod hide
	// a change.
	TrustLastmod bool
	// NoSitemaps skips reading /sitemap.xml and the sitemaps robots.txt names.
	// Default false: their URLs join the start URL as roots of the crawl.
	NoSitemaps bool
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

// maxRedirects bounds the redirects and meta refreshes followed from one link.
const maxRedirects = 10

// crawler holds the state of one Crawl call.
type crawler struct {
	cfg     Config
	client  *http.Client // pages: redirects are returned, the crawler follows them
	follow  *http.Client // robots.txt and sitemaps: redirects on the host are followed
	host    string
	robots  *robotstxt.Group
	pace    pacer
	lastmod map[string]time.Time // sitemap lastmod by URL; read-only once the pages are fetched

	mu      sync.Mutex // guards the fields below and serialises emit
	stats   Stats
	seen    map[string]bool // queued or fetched
	emitted map[string]bool
}

// Crawl fetches the pages reachable from cfg.Start and from the site's sitemaps
// on the same host (and under cfg.Prefix), breadth first to cfg.MaxDepth, and
// calls emit for each HTML or PDF page. emit is never called concurrently: calls are serialised, so it may
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
	c.follow = client
	pages := *client
	pages.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.client = &pages
	var sitemaps []string
	c.robots, sitemaps = c.fetchRobots(ctx, start)
	if c.robots != nil && c.robots.CrawlDelay > c.pace.delay {
		c.pace.delay = max(c.pace.delay, min(c.robots.CrawlDelay, c.cfg.MaxCrawlDelay))
	}

	level := []string{start}
	if cfg.MaxDepth >= 0 && !cfg.NoSitemaps {
		fromSitemaps, lastmod := c.sitemapURLs(ctx, start, sitemaps, cfg.MaxPages)
		c.lastmod = lastmod
		for _, u := range fromSitemaps {
			if !c.seen[u] {
				c.seen[u] = true
				level = append(level, u)
			}
		}
	}
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
			if p.NotModified {
				c.stats.NotModified++
			}
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

// fetch gets one URL, following HTTP redirects and meta refreshes on the host.
// It returns the page, or the reason it was skipped.
func (c *crawler) fetch(ctx context.Context, u string) (Page, SkipReason) {
	var refreshes []Refresh
	cur := u
	for hop := 0; ; hop++ {
		if hop > maxRedirects {
			return Page{}, SkipHTTPError
		}
		if !c.allowed(cur) {
			return Page{}, SkipRobots
		}
		prev, known := c.cfg.Previous[cur]
		if known && c.unchangedSince(cur, prev) {
			if prev.Refresh != "" {
				refreshes = append(refreshes, Refresh{URL: cur, Target: prev.Refresh, ETag: prev.ETag,
					LastModified: prev.LastModified, Fetched: prev.Fetched})
				cur = prev.Refresh
				continue
			}
			return c.notModified(cur, prev, nil, refreshes)
		}
		if !known || !prev.conditional() {
			prev = Revisit{}
		}
		a, reason := c.get(ctx, cur, prev)
		switch {
		case reason != "":
			return Page{}, reason
		case a.redirect != "":
			cur = a.redirect
			continue
		case a.notModified && prev.Refresh != "":
			r := Refresh{URL: cur, Target: prev.Refresh, ETag: prev.ETag, LastModified: prev.LastModified,
				Fetched: a.fetched}
			r.ETag, r.LastModified = a.validators(r.ETag, r.LastModified)
			refreshes = append(refreshes, r)
			cur = prev.Refresh
			continue
		case a.notModified:
			return c.notModified(cur, prev, &a, refreshes)
		case a.refresh != "":
			refreshes = append(refreshes, Refresh{URL: cur, Target: a.refresh, ETag: a.etag,
				LastModified: a.lastModified, Fetched: a.fetched})
			cur = a.refresh
			continue
		}
		p := a.page
		p.Refreshes = refreshes
		return p, ""
	}
}

// unchangedSince reports whether Config.TrustLastmod lets u go unasked: its
// sitemap lastmod is not after the earlier answer.
func (c *crawler) unchangedSince(u string, prev Revisit) bool {
	if !c.cfg.TrustLastmod || prev.Fetched.IsZero() {
		return false
	}
	lm, ok := c.lastmod[u]
	return ok && !lm.After(prev.Fetched)
}

// notModified builds the page an earlier crawl recorded for the answering URL
// cur, with the validators of a (the 304 response) when there was a request.
func (c *crawler) notModified(cur string, prev Revisit, a *answer, refreshes []Refresh) (Page, SkipReason) {
	page := prev.Page
	if page == "" {
		page = cur
	}
	if !c.inScope(page) {
		return Page{}, SkipOffSite
	}
	p := Page{URL: page, Links: prev.Links, ETag: prev.ETag, LastModified: prev.LastModified,
		Fetched: prev.Fetched, NotModified: true, Refreshes: refreshes}
	if page != cur {
		p.Source = cur
	}
	if a != nil {
		p.Fetched = a.fetched
		p.ETag, p.LastModified = a.validators(p.ETag, p.LastModified)
	}
	return p, ""
}

// answer is what one request returned: a redirect to follow, a 304, a meta
// refresh or a page.
type answer struct {
	redirect           string // an HTTP redirect's target on the host
	refresh            string // a meta refresh's target on the host
	notModified        bool
	page               Page
	etag, lastModified string
	fetched            time.Time
}

// validators returns a 304's validators, each in place of the earlier one it
// updates. RFC 9110 section 15.4.5 has a 304 carry the ETag a 200 would, but a
// server may leave Last-Modified out when it sends an ETag (Go's does), so an
// absent one keeps the earlier value.
func (a answer) validators(etag, lastModified string) (string, string) {
	if a.etag != "" {
		etag = a.etag
	}
	if a.lastModified != "" {
		lastModified = a.lastModified
	}
	return etag, lastModified
}

// get makes one request for u, conditional on prev's validators when it has
// any, and reads the answer.
func (c *crawler) get(ctx context.Context, u string, prev Revisit) (answer, SkipReason) {
	if err := c.pace.wait(ctx); err != nil {
		return answer{}, SkipHTTPError
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return answer{}, SkipHTTPError
	}
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,application/pdf;q=0.9,*/*;q=0.1")
	// RFC 9110 section 13.1: a server that has the ETag ignores If-Modified-Since, and one that has only the date
	// compares it; sending both lets either kind answer 304.
	if prev.ETag != "" {
		req.Header.Set("If-None-Match", prev.ETag)
	}
	if prev.LastModified != "" {
		req.Header.Set("If-Modified-Since", prev.LastModified)
	}
	c.countRequest()
	resp, err := c.client.Do(req)
	if err != nil {
		if errors.Is(err, ErrPrivateAddress) {
			return answer{}, SkipPrivate
		}
		return answer{}, SkipHTTPError
	}
	defer func() {
		// Read a little of what is not kept (a redirect's or an error's page) so the connection can be reused.
		n, _ := io.CopyN(io.Discard, resp.Body, 4<<10)
		c.countBytes(n)
		resp.Body.Close()
	}()
	a := answer{etag: resp.Header.Get("ETag"), lastModified: resp.Header.Get("Last-Modified"), fetched: time.Now().UTC()}
	switch {
	case resp.StatusCode == http.StatusNotModified:
		if !prev.conditional() {
			return answer{}, SkipHTTPError // nothing was asked that a 304 could answer
		}
		a.notModified = true
		return a, ""
	case resp.StatusCode >= 400:
		return answer{}, SkipHTTPError
	case resp.StatusCode >= 300:
		loc := resp.Header.Get("Location")
		if loc == "" {
			return answer{}, SkipHTTPError
		}
		next, ok := Canonical(resp.Request.URL, loc)
		if !ok || hostOf(next) != c.host {
			return answer{}, SkipOffSite
		}
		a.redirect = next
		return a, ""
	}
	final, ok := Canonical(nil, resp.Request.URL.String())
	if !ok || !c.inScope(final) {
		return answer{}, SkipOffSite
	}
	ctype := mediaType(resp.Header.Get("Content-Type"))
	if ctype != "" && kindOf(ctype) == "" {
		return answer{}, SkipContentType
	}
	if resp.ContentLength > c.cfg.MaxBytes {
		return answer{}, SkipTooLarge
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxBytes+1))
	c.countBytes(int64(len(body)))
	if err != nil {
		return answer{}, SkipReadError
	}
	if int64(len(body)) > c.cfg.MaxBytes {
		return answer{}, SkipTooLarge
	}
	if ctype == "" {
		ctype = mediaType(http.DetectContentType(body))
	}
	kind := kindOf(ctype)
	if kind == "" {
		return answer{}, SkipContentType
	}
	a.page = Page{URL: final, ContentType: kind, Body: body, ETag: a.etag, LastModified: a.lastModified,
		ContentLanguage: resp.Header.Get("Content-Language"),
		Fetched:         a.fetched}
	if kind != "text/html" {
		return a, ""
	}
	fu, err := url.Parse(final)
	if err != nil {
		return answer{}, SkipReadError
	}
	refresh, canonical := headHints(body, fu)
	if refresh != "" && refresh != final {
		// The HTML standard navigates to a refresh's URL as to a redirect's; follow it as one, on the host only.
		if hostOf(refresh) != c.host {
			return answer{}, SkipOffSite
		}
		a.refresh = refresh
		return a, ""
	}
	// A page that names another URL on the host as its canonical (RFC 6596) is recorded under it, so its copies
	// (a print view, a query variant) are one page. Except the home page: templates that name it as every page's
	// canonical are a common mistake that would fold a whole site into one page, so a page at another path that
	// names it is kept under its own URL (true copies are dropped later by their identical content) and the
	// canonical is followed as a link. A canonical elsewhere or out of scope is ignored.
	a.page.Links = extractLinks(body, fu, c.host, nil)
	if canonical != "" && canonical != final && c.inScope(canonical) && c.allowed(canonical) {
		if pathOf(canonical) != "/" || sameDocument(final, canonical) {
			a.page.URL, a.page.Source = canonical, final
		} else if !slices.Contains(a.page.Links, canonical) {
			a.page.Links = append(a.page.Links, canonical)
		}
	}
	return a, ""
}

// sameDocument reports whether two canonical URLs on the host name one document: the same path once the query
// and a directory's index file are set aside.
func sameDocument(a, b string) bool {
	doc := func(u string) string {
		p := pathOf(u)
		for _, index := range []string{"index.html", "index.htm", "index.php"} {
			p = strings.TrimSuffix(p, index)
		}
		return p
	}
	return doc(a) == doc(b)
}

// inScope reports whether the canonical URL u is on the crawled host under the prefix.
func (c *crawler) inScope(u string) bool {
	return hostOf(u) == c.host && strings.HasPrefix(pathOf(u), c.cfg.Prefix)
}

func (c *crawler) countRequest() {
	c.mu.Lock()
	c.stats.Requests++
	c.mu.Unlock()
}

func (c *crawler) countBytes(n int64) {
	c.mu.Lock()
	c.stats.BodyBytes += n
	c.mu.Unlock()
}

// fetchRobots reads robots.txt from the start URL's host and returns the group
// for UserAgent and the sitemaps the file lists. A missing or unreachable file
// allows everything; robotstxt.FromResponse maps a 5xx to "disallow all", as
// its spec asks.
func (c *crawler) fetchRobots(ctx context.Context, start string) (*robotstxt.Group, []string) {
	u, err := url.Parse(start)
	if err != nil {
		return nil, nil
	}
	u.Path, u.RawQuery = "/robots.txt", ""
	resp, err := c.getFile(ctx, u.String())
	if err != nil {
		return nil, nil
	}
	defer resp.Body.Close()
	data, err := robotstxt.FromResponse(resp)
	if err != nil {
		return nil, nil
	}
	return data.FindGroup(UserAgent), data.Sitemaps
}

// getFile requests a file about the site (robots.txt, a sitemap), following its redirects on the host, and
// counts the request.
func (c *crawler) getFile(ctx context.Context, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", UserAgent)
	c.countRequest()
	return c.follow.Do(req)
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
