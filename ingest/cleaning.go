package ingest

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path"
	"strings"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest/clean"
	"github.com/ragproxy/ragproxy/ingest/crawl"
	"github.com/ragproxy/ragproxy/ingest/faqmarkup"
	"golang.org/x/net/html"
)

// cleanPage turns one raw page into a doc, or nil when it has no readable content. It needs the previous index
// (r.prevReady closed).
func (r *run) cleanPage(ctx context.Context, cleaner *clean.Cleaner, h hashedPage) *doc {
	if ctx.Err() != nil {
		return nil
	}
	p := h.page
	d := &doc{url: p.URL, rawHash: h.rawHash, links: p.Links, discovered: p.Links, etag: p.ETag,
		lastModified: p.LastModified, source: p.Source, fetched: p.Fetched, refreshes: p.Refreshes, pdf: isPDF(p)}
	if c, ok := r.prev.copyOf(p.URL); ok && d.pdf && d.rawHash != "" && c.RawHash == d.rawHash && len(c.Shingles) > 0 {
		// Left out as a copy of the site's pages before, and unchanged: judged again by its recorded text
		// (dropCopies), and read only if the pages no longer hold it.
		d.copy, d.hash, d.shingles, d.page = true, "copy "+d.rawHash, c.Shingles, &p
		return d
	}
	old := r.prev.page(p.URL)
	if p.NotModified {
		// The crawler asks conditionally only for pages of the previous index (reuse.revisits), so a 304 takes
		// the path of an unchanged body.
		if old == nil {
			r.cfg.Logger.Warn("page not modified but not in the previous index", "url", p.URL)
			return nil
		}
		d.rawHash = old.RawHash
	}
	if old != nil && old.RawHash == d.rawHash {
		if ref, ok := r.prev.markdownRef(old); ok {
			// The markdown stays where the previous version has it, read from there if at all.
			d.title, d.md, d.spilled, d.hash, d.reused, d.faq = old.Title, ref, true, old.Hash, old, old.FAQ
			d.lang, d.declared, d.alternates, d.anchors = old.Lang, true, r.prev.alternates(old), old.Anchors
			return d
		}
		md, err := r.prev.markdown(old)
		if err == nil {
			d.title, d.markdown, d.hash, d.reused, d.faq = old.Title, md, old.Hash, old, old.FAQ
			d.lang, d.declared, d.alternates, d.anchors = old.Lang, true, r.prev.alternates(old), old.Anchors
			return r.kept(d)
		}
		r.cfg.Logger.Warn("previous markdown unreadable; cleaning the page again", "url", p.URL, "err", err)
		if p.NotModified {
			return nil // no body to clean: the page is fetched in full by the next crawl
		}
	}
	return r.cleanBody(cleaner, p, d)
}

// cleanBody cleans p's body into d (a PDF needs no cleaner), or nil when it has no readable content.
func (r *run) cleanBody(cleaner *clean.Cleaner, p crawl.Page, d *doc) *doc {
	base := p.URL
	if p.Source != "" {
		base = p.Source // relative links in the body resolve against the URL that served it
	}
	var c clean.Doc
	var err error
	if d.pdf {
		c, err = clean.PDF(p.Body)
	} else {
		c, d.faq, err = cleanHTML(cleaner, p.Body, base, p.URL, r.cfg.Logger)
	}
	if err != nil || strings.TrimSpace(c.Markdown) == "" {
		r.cfg.Logger.Debug("page unreadable", "url", p.URL, "err", err)
		return nil
	}
	d.title, d.markdown, d.hash = c.Title, c.Markdown, sha([]byte(c.Markdown))
	d.lang, d.declared = pageLanguage(c, p.URL, p.ContentLanguage)
	d.alternates, d.anchors = c.Alternates, c.Anchors
	if d.title == "" {
		d.title = p.URL
	}
	return r.kept(d)
}

// isPDF reports whether p is a PDF document: its content type says so, or, for a page that was not fetched again
// (a 304), its path's extension.
func isPDF(p crawl.Page) bool {
	if p.ContentType != "" {
		return p.ContentType == "application/pdf"
	}
	u, err := url.Parse(p.URL)
	return err == nil && strings.EqualFold(path.Ext(u.Path), ".pdf")
}

// kept is d with its markdown spilled, as soon as it is cleaned; should the spill fail, d keeps it in memory
// and build tries again, failing the run.
func (r *run) kept(d *doc) *doc {
	if err := r.keep(d); err != nil {
		r.cfg.Logger.Warn("spilling a page's text failed", "url", d.url, "err", err)
	}
	return d
}

// cleanHTML cleans an HTML page (relative links resolved against base) and extracts its FAQ markup (under the
// page's URL), from one parse: the FAQ extraction reads the tree first, as cleaning changes it.
func cleanHTML(cleaner *clean.Cleaner, body []byte, base, url string, logger *slog.Logger) (clean.Doc, []index.FAQEntry, error) {
	root, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		return clean.Doc{}, nil, fmt.Errorf("clean html %s: %w", base, err)
	}
	entries := pageFAQ(root, body, url, logger)
	c, err := cleaner.HTMLTree(root, body, base)
	return c, entries, err
}

// pageFAQ is the FAQ markup of a page's HTML (root, parsed from body), under the page's URL. A page the extractor
// cannot read has none.
func pageFAQ(root *html.Node, body []byte, url string, logger *slog.Logger) []index.FAQEntry {
	entries, err := faqmarkup.ExtractTree(root, body, url)
	if err != nil {
		logger.Debug("faq markup unreadable", "url", url, "err", err)
		return nil
	}
	out := make([]index.FAQEntry, len(entries))
	for i, e := range entries {
		out[i] = index.FAQEntry{Question: e.Question, Answer: e.Answer, URL: e.URL, Alternatives: e.Alternatives, Source: e.Source}
	}
	return out
}
