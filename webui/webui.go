// Package webui is ragproxy's own chat page, served at / from files embedded in the binary: a single page that
// talks to the server's /v1 API from the browser (streamed answers rendered as markdown, their sources, a
// multi-turn conversation), so an operator can try, show and share the assistant without installing a chat UI.
//
// Everything the page shows is untrusted (answers quote retrieved pages, and pages can be hostile): it renders
// markdown with marked and sanitises the HTML with DOMPurify (vendored under assets/vendor with their licences),
// and every response carries a strict Content-Security-Policy that allows only the page's own scripts, styles and
// API. A Page is immutable after New and safe for concurrent use.
package webui

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed assets
var assets embed.FS

// Config describes the assistant the page talks to. The zero value is a page for a gateway without an index.
type Config struct {
	// Site names the site in the page's greeting and title; empty means a plain gateway (no index), for which
	// the page only points at /v1.
	Site string
	// Model is the model id the page asks by default; the page lists the others /v1/models returns.
	Model string
	// AuthRequired makes the page ask for an API key (kept in the browser's sessionStorage).
	AuthRequired bool
}

// ContentSecurityPolicy is sent with the page and its assets: scripts, styles and connections only from the
// server itself, images only from it or inline data, no frames, forms, plugins or base URL changes. A hostile
// page quoted in an answer can therefore neither run a script nor load an image that carries data elsewhere.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// asset is one file as served: its bytes, gzipped once, and its headers.
type asset struct {
	body, gz    []byte
	contentType string
	etag        string
}

// Page serves the chat page (GET /) and its assets (GET /assets/...).
type Page struct {
	index  asset
	assets map[string]asset
}

// New renders the page for cfg and prepares every asset.
func New(cfg Config) (*Page, error) {
	p := &Page{assets: map[string]asset{}}
	sum := sha256.New()
	err := fs.WalkDir(assets, "assets", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(name, ".html") || strings.HasSuffix(name, ".tmpl") {
			return err
		}
		b, err := assets.ReadFile(name)
		if err != nil {
			return err
		}
		sum.Write(b)
		ctype := mime.TypeByExtension(path.Ext(name))
		if ctype == "" || strings.HasSuffix(name, "LICENSE") || strings.HasSuffix(name, ".md") {
			ctype = "text/plain; charset=utf-8"
		}
		p.assets["/"+name] = newAsset(b, ctype)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("webui: %w", err)
	}
	name := "assets/index.html"
	if cfg.Site == "" {
		name = "assets/gateway.html"
	}
	tmpl, err := template.ParseFS(assets, name)
	if err != nil {
		return nil, fmt.Errorf("webui: %w", err)
	}
	var b bytes.Buffer
	data := struct {
		Config
		Version string
	}{cfg, hex.EncodeToString(sum.Sum(nil))[:12]}
	if err := tmpl.Execute(&b, data); err != nil {
		return nil, fmt.Errorf("webui: %w", err)
	}
	p.index = newAsset(b.Bytes(), "text/html; charset=utf-8")
	return p, nil
}

func newAsset(b []byte, ctype string) asset {
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	w.Write(b)
	w.Close()
	h := sha256.Sum256(b)
	return asset{body: b, gz: gz.Bytes(), contentType: ctype, etag: `"` + hex.EncodeToString(h[:8]) + `"`}
}

// Size is the page's weight: the bytes of the page and every asset it loads, as sent to a browser that accepts
// gzip.
func (p *Page) Size() (raw, gzipped int) {
	raw, gzipped = len(p.index.body), len(p.index.gz)
	for name, a := range p.assets {
		if strings.HasSuffix(name, ".js") || strings.HasSuffix(name, ".css") || strings.HasSuffix(name, ".svg") {
			raw += len(a.body)
			gzipped += len(a.gz)
		}
	}
	return raw, gzipped
}

// ServeHTTP serves GET / and GET /assets/...; anything else is 404.
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	var a asset
	switch {
	case r.URL.Path == "/":
		a = p.index
		h.Set("Cache-Control", "no-cache")
	default:
		var ok bool
		if a, ok = p.assets[r.URL.Path]; !ok {
			http.NotFound(w, r)
			return
		}
		// Asset URLs carry the assets' version (?v=), so a browser may keep them.
		h.Set("Cache-Control", "public, max-age=86400")
	}
	h.Set("Content-Type", a.contentType)
	h.Set("ETag", a.etag)
	h.Set("Vary", "Accept-Encoding")
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.body
	if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		body = a.gz
	}
	h.Set("Content-Length", fmt.Sprint(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(body)
}
