// Package webui is ragproxy's own chat page, served at / from files embedded in the binary: a single page that
// talks to the server's /v1 API from the browser (streamed answers rendered as markdown, their sources, a
// multi-turn conversation), so an operator can try, show and share the assistant without installing a chat UI.
//
// Everything the page shows is untrusted (answers quote retrieved pages, and pages can be hostile): it renders
// markdown with marked and sanitises the HTML with DOMPurify (vendored under assets/vendor with their licences),
// and every response carries a strict Content-Security-Policy that allows only the page's own scripts, styles and
// API.
//
// With embed origins the page is also a widget for the sites' own pages: /widget.js adds a launcher that opens
// the page's embedded layout (/?embed=1) in a frame, which only those origins may frame (frame-ancestors). A Page
// is immutable after New and safe for concurrent use.
package webui

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
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
	// EmbedOrigins are the sites whose pages may carry the chat widget (scheme://host[:port]): GET /widget.js
	// serves it, and the chat page in its embedded layout (/?embed=1) may be framed by them alone. Default none:
	// the widget is off (/widget.js is 404) and no site may frame the page.
	EmbedOrigins []string
}

// ContentSecurityPolicy is sent with the page and its assets: scripts, styles and connections only from the
// server itself, images only from it or inline data, no frames, forms, plugins or base URL changes. A hostile
// page quoted in an answer can therefore neither run a script nor load an image that carries data elsewhere.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// embedPolicy is ContentSecurityPolicy for the embedded chat page: framed by the given origins only.
func embedPolicy(origins []string) string {
	return strings.TrimSuffix(ContentSecurityPolicy, "'none'") + strings.Join(origins, " ")
}

// asset is one file as served: its bytes, gzipped once, and its headers.
type asset struct {
	body, gz    []byte
	contentType string
	etag        string
}

// Page serves the chat page (GET /, and GET /?embed=1 for the widget), its assets (GET /assets/...), the
// widget (GET /widget.js) and the insights page for the site's owners (GET /admin/, which asks for an admin key
// and reads the admin API).
type Page struct {
	index  asset
	admin  asset
	assets map[string]asset
	// embed and widget are set when embedding is on: the page's embedded layout and /widget.js.
	embed, widget *asset
	embedCSP      string
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
	page, err := assets.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("webui: %w", err)
	}
	version := hex.EncodeToString(sum.Sum(nil))[:12]
	auth := "none"
	if cfg.AuthRequired {
		auth = "required"
	}
	render := func(embed bool) (asset, error) {
		var embedAttributes string
		if embed {
			embedAttributes = ` data-embed="1" data-embed-origins="` + html.EscapeString(strings.Join(cfg.EmbedOrigins, " ")) + `"`
		}
		b, err := fill(page, strings.NewReplacer("{{.Site}}", html.EscapeString(cfg.Site),
			"{{.Model}}", html.EscapeString(cfg.Model), "{{.Version}}", version, "{{.Auth}}", auth,
			"{{.EmbedAttributes}}", embedAttributes))
		if err != nil {
			return asset{}, fmt.Errorf("webui: %s: %w", name, err)
		}
		return newAsset(b, "text/html; charset=utf-8"), nil
	}
	if p.index, err = render(false); err != nil {
		return nil, err
	}
	adminPage, err := assets.ReadFile("assets/admin.html")
	if err != nil {
		return nil, fmt.Errorf("webui: %w", err)
	}
	siteTitle, siteHeading := "", ""
	if cfg.Site != "" {
		siteTitle, siteHeading = html.EscapeString(cfg.Site)+" ", html.EscapeString(cfg.Site)+": "
	}
	b, err := fill(adminPage, strings.NewReplacer("{{.SiteTitle}}", siteTitle, "{{.SiteHeading}}", siteHeading, "{{.Version}}", version))
	if err != nil {
		return nil, fmt.Errorf("webui: assets/admin.html: %w", err)
	}
	p.admin = newAsset(b, "text/html; charset=utf-8")
	if len(cfg.EmbedOrigins) == 0 || cfg.Site == "" {
		return p, nil
	}
	for _, o := range cfg.EmbedOrigins {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return nil, fmt.Errorf("webui: embed origin %q: want scheme://host[:port]", o)
		}
	}
	embed, err := render(true)
	if err != nil {
		return nil, err
	}
	js, err := widgetScript(cfg.EmbedOrigins)
	if err != nil {
		return nil, err
	}
	p.embed, p.widget, p.embedCSP = &embed, &js, embedPolicy(cfg.EmbedOrigins)
	return p, nil
}

// fill replaces the page's {{.Name}} slots by their HTML and fails on a slot it does not know. The page needs
// nothing more than these slots; html/template would do the same escaping, but executing a template makes the
// linker keep every exported method of every type in the binary (it may call any method by name), which made
// the binary half again as large.
func fill(page []byte, slots *strings.Replacer) ([]byte, error) {
	out := slots.Replace(string(page))
	if i := strings.Index(out, "{{"); i >= 0 {
		end := min(len(out), i+40)
		return nil, fmt.Errorf("unknown slot at %q", out[i:end])
	}
	return []byte(out), nil
}

// widgetScript is /widget.js with the origins it may start on written into it: the list is the script's own
// check, so a page elsewhere gets no launcher (and could not frame the chat page anyway).
func widgetScript(origins []string) (asset, error) {
	src, err := assets.ReadFile("assets/widget.js.tmpl")
	if err != nil {
		return asset{}, fmt.Errorf("webui: %w", err)
	}
	// json.Marshal escapes <, > and & too, so the list is a plain JavaScript array literal.
	list, err := json.Marshal(origins)
	if err != nil {
		return asset{}, fmt.Errorf("webui: %w", err)
	}
	const slot = "/*ORIGINS*/[]"
	if !bytes.Contains(src, []byte(slot)) {
		return asset{}, fmt.Errorf("webui: widget.js.tmpl has no %s", slot)
	}
	return newAsset(bytes.Replace(src, []byte(slot), list, 1), "text/javascript; charset=utf-8"), nil
}

// WidgetSize is /widget.js's weight, plain and gzipped as served; zero when embedding is off.
func (p *Page) WidgetSize() (raw, gzipped int) {
	if p.widget == nil {
		return 0, 0
	}
	return len(p.widget.body), len(p.widget.gz)
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
// gzip (the insights page's own assets aside).
func (p *Page) Size() (raw, gzipped int) {
	raw, gzipped = len(p.index.body), len(p.index.gz)
	for name, a := range p.assets {
		if strings.HasPrefix(name, "/assets/admin.") {
			continue
		}
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
	embed := p.embed != nil && r.URL.Path == "/" && r.URL.Query().Get("embed") == "1"
	if embed {
		// frame-ancestors alone decides who may frame it (CSP Level 2 makes X-Frame-Options obsolete for it).
		h.Set("Content-Security-Policy", p.embedCSP)
	} else {
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
	}
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	var a asset
	switch {
	case embed:
		a = *p.embed
		h.Set("Cache-Control", "no-cache")
	case r.URL.Path == "/":
		a = p.index
		h.Set("Cache-Control", "no-cache")
	case r.URL.Path == "/admin" || r.URL.Path == "/admin/":
		a = p.admin
		h.Set("Cache-Control", "no-cache")
	case r.URL.Path == "/widget.js":
		if p.widget == nil {
			http.NotFound(w, r)
			return
		}
		a = *p.widget
		// Sites load it by this one URL, without a version: a short lifetime lets a change reach them. Any
		// site's page may load it as a script (it starts only on the embed origins).
		h.Set("Cache-Control", "public, max-age=300")
		h.Set("Cross-Origin-Resource-Policy", "cross-origin")
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
