package crawl

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Sitemap limits. The sitemaps.org protocol caps a sitemap at 50,000 URLs and 50 MB uncompressed, and an index at
// 50,000 sitemaps; maxSitemaps bounds the files one crawl reads, so a site cannot spend its requests on sitemaps.
const (
	maxSitemapBytes = 50 << 20
	maxSitemaps     = 1000
)

// sitemapEntry is one <url> (or, in a sitemap index, one <sitemap>) of a sitemap.
type sitemapEntry struct {
	Loc     string `xml:"loc"`
	Lastmod string `xml:"lastmod"`
}

// sitemapURLs reads /sitemap.xml and the sitemaps robots.txt lists (https://www.sitemaps.org/protocol.html,
// "Informing search engine crawlers"), following sitemap index files, and returns the URLs they list that the
// crawl may fetch: on the start URL's host, under the prefix, allowed by robots.txt, not a file type the crawler
// skips. It stops at limit URLs (0: no limit). lastmod maps each URL to the end of the period its <lastmod>
// names. Sitemaps on other hosts are not read (the protocol's cross-submission needs the other host's robots.txt
// to vouch for them); a sitemap that is missing or malformed gives what it listed before the error.
func (c *crawler) sitemapURLs(ctx context.Context, start string, listed []string, limit int) (pages []string, lastmod map[string]time.Time) {
	lastmod = make(map[string]time.Time)
	su, err := url.Parse(start)
	if err != nil {
		return nil, lastmod
	}
	root := &url.URL{Scheme: su.Scheme, Host: su.Host, Path: "/sitemap.xml"}
	queue := []string{root.String()}
	queue = append(queue, listed...)
	read := map[string]bool{}
	seen := map[string]bool{}
	for len(queue) > 0 && len(read) < maxSitemaps && (limit <= 0 || len(pages) < limit) {
		sm, ok := Canonical(su, queue[0])
		queue = queue[1:]
		if !ok || read[sm] || hostOf(sm) != c.host || !c.allowed(sm) {
			continue
		}
		read[sm] = true
		urls, nested := c.readSitemap(ctx, sm)
		queue = append(queue, nested...)
		for _, e := range urls {
			u, ok := Canonical(su, e.Loc)
			if !ok || seen[u] || hostOf(u) != c.host || !strings.HasPrefix(pathOf(u), c.cfg.Prefix) ||
				skipExtension(pathOf(u)) || !c.allowed(u) {
				continue
			}
			seen[u] = true
			pages = append(pages, u)
			if t, ok := parseLastmod(e.Lastmod); ok {
				lastmod[u] = t
			}
			if limit > 0 && len(pages) >= limit {
				break
			}
		}
	}
	return pages, lastmod
}

// readSitemap fetches one sitemap, gzipped or not, and returns its URL entries and, for a sitemap index, the
// sitemaps it lists.
func (c *crawler) readSitemap(ctx context.Context, u string) (urls []sitemapEntry, nested []string) {
	if err := c.pace.wait(ctx); err != nil {
		return nil, nil
	}
	resp, err := c.getFile(ctx, u)
	if err != nil {
		return nil, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil
	}
	counted := &countingReader{r: io.LimitReader(resp.Body, maxSitemapBytes)}
	defer func() { c.countBytes(counted.n) }()
	urls, nested, _ = parseSitemap(counted)
	return urls, nested
}

// parseSitemap decodes a sitemap or a sitemap index (the sitemaps.org XML schema, matched by local names so a
// missing or odd namespace does not matter). A body that starts with the gzip magic number is decompressed
// first: the protocol allows sitemap.xml.gz, and servers send it as application/gzip rather than with a
// Content-Encoding the HTTP client would undo. It returns the entries read before any error.
func parseSitemap(r io.Reader) (urls []sitemapEntry, nested []string, err error) {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, err
		}
		defer zr.Close()
		r = io.LimitReader(zr, maxSitemapBytes)
	} else {
		r = br
	}
	dec := xml.NewDecoder(r)
	dec.Strict = false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return urls, nested, nil
		}
		if err != nil {
			return urls, nested, err
		}
		se, ok := tok.(xml.StartElement)
		if !ok || (se.Name.Local != "url" && se.Name.Local != "sitemap") {
			continue
		}
		var e sitemapEntry
		if err := dec.DecodeElement(&e, &se); err != nil {
			return urls, nested, err
		}
		e.Loc, e.Lastmod = strings.TrimSpace(e.Loc), strings.TrimSpace(e.Lastmod)
		if e.Loc == "" {
			continue
		}
		if se.Name.Local == "sitemap" {
			nested = append(nested, e.Loc)
		} else {
			urls = append(urls, e)
		}
	}
}

// parseLastmod parses a sitemap <lastmod>, a W3C Datetime (https://www.w3.org/TR/NOTE-datetime), and returns
// the end of the period it names: "2016-12-16" is the end of that day in the last time zone to end it (UTC-12,
// as a date has none), so a page changed later that day is not taken as older than a fetch earlier that day.
func parseLastmod(s string) (time.Time, bool) {
	for _, f := range []struct {
		layout string
		span   func(time.Time) time.Time
	}{
		{time.RFC3339Nano, func(t time.Time) time.Time { return t }},
		{"2006-01-02T15:04Z07:00", func(t time.Time) time.Time { return t.Add(time.Minute) }},
		{"2006-01-02", func(t time.Time) time.Time { return t.AddDate(0, 0, 1).Add(latestZone) }},
		{"2006-01", func(t time.Time) time.Time { return t.AddDate(0, 1, 0).Add(latestZone) }},
		{"2006", func(t time.Time) time.Time { return t.AddDate(1, 0, 0).Add(latestZone) }},
	} {
		if t, err := time.Parse(f.layout, s); err == nil {
			if f.layout == time.RFC3339Nano && !strings.Contains(s, ".") {
				t = t.Add(time.Second) // whole seconds: the end of that second
			}
			return f.span(t), true
		}
	}
	return time.Time{}, false
}

// latestZone is how much later than in UTC a day ends in the last time zone to end it, UTC-12.
const latestZone = 12 * time.Hour

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (cr *countingReader) Read(p []byte) (int, error) {
	n, err := cr.r.Read(p)
	cr.n += int64(n)
	return n, err
}
