package crawl

import (
	"context"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// ReadMirror walks dir, a local copy of a website, and calls emit for each
// HTML or PDF file with the URL it has under baseURL: DIR/a/b/index.html is
// BASE/a/b/ and DIR/a/b.html is BASE/a/b.html (then made canonical). Links in
// the HTML are resolved against that page URL and kept when they are on
// baseURL's host, exactly as Crawl records them.
//
// Files are read and scanned for links in parallel (one worker per CPU) but
// emitted in lexical path order, one call at a time. Files of other types are
// skipped and counted; unreadable files are counted as read errors. ReadMirror
// returns an error when dir cannot be walked or baseURL is not an absolute
// http(s) URL, or ctx's error when ctx ends first.
func ReadMirror(ctx context.Context, dir, baseURL string, emit func(Page)) (Stats, error) {
	var stats Stats
	base, err := url.Parse(baseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return stats, fmt.Errorf("read mirror: base URL %q is not an absolute http(s) URL", baseURL)
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	baseCanon, _ := Canonical(nil, base.String())
	host := hostOf(baseCanon)

	var files []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			stats.skip(SkipReadError)
			return nil
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && p != dir {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		if mirrorKind(p) == "" {
			stats.skip(SkipContentType)
			return nil
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		return stats, fmt.Errorf("read mirror %s: %w", dir, err)
	}

	type result struct {
		page Page
		err  error
	}
	workers := max(runtime.GOMAXPROCS(0), 1)
	links := &linkCache{}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// order carries one result channel per file, in file order, so pages are
	// emitted in order while up to cap(order) files are being read ahead.
	order := make(chan chan result, workers*4)
	type job struct {
		path string
		out  chan result
	}
	jobs := make(chan job)
	go func() {
		defer close(order)
		defer close(jobs)
		for _, f := range files {
			out := make(chan result, 1)
			select {
			case order <- out:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- job{f, out}:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range workers {
		go func() {
			for j := range jobs {
				p, err := readMirrorFile(dir, j.path, base, host, links)
				j.out <- result{p, err}
			}
		}()
	}
	for out := range order {
		var r result
		select {
		case r = <-out:
		case <-ctx.Done():
			return stats, fmt.Errorf("read mirror: %w", ctx.Err())
		}
		if r.err != nil {
			stats.skip(SkipReadError)
			continue
		}
		stats.Pages++
		emit(r.page)
	}
	if err := ctx.Err(); err != nil {
		return stats, fmt.Errorf("read mirror: %w", err)
	}
	return stats, nil
}

// readMirrorFile reads one file and builds its Page.
func readMirrorFile(dir, p string, base *url.URL, host string, links *linkCache) (Page, error) {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return Page{}, err
	}
	rel = filepath.ToSlash(rel)
	if name := rel[strings.LastIndexByte(rel, '/')+1:]; strings.EqualFold(name, "index.html") || strings.EqualFold(name, "index.htm") {
		rel = rel[:len(rel)-len(name)]
	}
	pageURL := base.ResolveReference(&url.URL{Path: rel})
	canon, ok := Canonical(nil, pageURL.String())
	if !ok {
		return Page{}, fmt.Errorf("read mirror: no URL for %s", p)
	}
	body, err := os.ReadFile(p)
	if err != nil {
		return Page{}, err
	}
	page := Page{URL: canon, ContentType: mirrorKind(p), Body: body}
	if page.ContentType == "text/html" {
		cu, err := url.Parse(canon)
		if err != nil {
			return Page{}, err
		}
		page.Links = extractLinks(body, cu, host, links)
	}
	return page, nil
}

// mirrorKind maps a file name to the kind of page it holds, or "".
func mirrorKind(p string) string {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".html", ".htm", ".xhtml":
		return "text/html"
	case ".pdf":
		return "application/pdf"
	}
	return ""
}
