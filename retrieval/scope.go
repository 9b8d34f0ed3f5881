package retrieval

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/siteurl"
)

// Scope restricts a retrieval to the pages under some URL prefixes (a section assistant's pages: only the
// graduate pages, only one programme). A prefix is an absolute http(s) URL, which names a host and a path, or a
// path starting with "/", which matches that path on every host of the index. Prefixes match whole path segments:
// "/grad" and "/grad/" both match /grad, /grad/ and /grad/apply, never /graduate/. Scheme, host case, a default
// port, a query and a fragment do not matter.
//
// Matching goes through keys (ScopeKeys): a page is in the scope when one of its URL's keys is one of the
// scope's. Qdrant's payload carries the same keys, so a filter there selects exactly the pages the in-process
// search does. A Scope is immutable and safe for concurrent use.
type Scope struct {
	prefixes []string // as given
	keys     []string // normalised, one per prefix
}

// ErrScopePrefix is wrapped by the errors of NewScope and Scope.Check.
var ErrScopePrefix = errors.New("bad URL prefix")

// NewScope parses and normalises prefixes; there must be at least one.
func NewScope(prefixes ...string) (*Scope, error) {
	if len(prefixes) == 0 {
		return nil, fmt.Errorf("scope: no URL prefixes: %w", ErrScopePrefix)
	}
	s := &Scope{}
	for _, p := range prefixes {
		k, err := prefixKey(p)
		if err != nil {
			return nil, fmt.Errorf("scope: prefix %q: %w", p, err)
		}
		s.prefixes = append(s.prefixes, p)
		if !slices.Contains(s.keys, k) {
			s.keys = append(s.keys, k)
		}
	}
	return s, nil
}

// Prefixes returns the prefixes as given.
func (s *Scope) Prefixes() []string { return slices.Clone(s.prefixes) }

// Keys returns the scope's normalised prefixes: "/path/" for a path, "//host/path/" for an absolute URL. A page
// is in the scope when ScopeKeys of its URL holds one of them.
func (s *Scope) Keys() []string { return slices.Clone(s.keys) }

// Match reports whether the page at rawURL is in the scope.
func (s *Scope) Match(rawURL string) bool {
	for _, k := range ScopeKeys(rawURL) {
		if slices.Contains(s.keys, k) {
			return true
		}
	}
	return false
}

// Check returns an error naming every prefix that matches no page of ix: a typo there would otherwise leave
// an assistant that knows nothing.
func (s *Scope) Check(ix *index.Index) error {
	found := make([]bool, len(s.keys))
	for _, p := range ix.Pages {
		for _, k := range ScopeKeys(p.URL) {
			if i := slices.Index(s.keys, k); i >= 0 {
				found[i] = true
			}
		}
	}
	var bad []string
	for i, ok := range found {
		if !ok {
			bad = append(bad, fmt.Sprintf("%q", s.keyPrefix(i)))
		}
	}
	switch {
	case len(bad) == 1:
		return fmt.Errorf("scope: prefix %s matches no page of the index (%d pages): %w", bad[0], len(ix.Pages), ErrScopePrefix)
	case len(bad) > 1:
		return fmt.Errorf("scope: prefixes %s match no page of the index (%d pages): %w", strings.Join(bad, ", "),
			len(ix.Pages), ErrScopePrefix)
	}
	return nil
}

// keyPrefix is the prefix as given that normalised to keys[i].
func (s *Scope) keyPrefix(i int) string {
	for _, p := range s.prefixes {
		if k, _ := prefixKey(p); k == s.keys[i] {
			return p
		}
	}
	return s.keys[i]
}

// prefixKey normalises a prefix into its key.
func prefixKey(p string) (string, error) {
	p = strings.TrimSpace(p)
	switch {
	case p == "":
		return "", fmt.Errorf("empty: %w", ErrScopePrefix)
	case strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "//"):
		u, err := url.Parse(p)
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrScopePrefix, err)
		}
		return dirPath(u.Path), nil
	}
	u, err := url.Parse(p)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrScopePrefix, err)
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" || u.Host == "" {
		return "", fmt.Errorf("want an absolute http(s) URL or a path starting with /: %w", ErrScopePrefix)
	}
	return "//" + siteurl.Host(u) + dirPath(u.Path), nil
}

// ScopeKeys returns the keys a Scope matches the page at rawURL by: for each leading run of its path's
// segments, the path ("/", "/programs/", "/programs/nursing/") and the same with the host ("//host/programs/").
// An unparsable URL has none.
func ScopeKeys(rawURL string) []string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil
	}
	host := "//" + siteurl.Host(u)
	path := dirPath(u.Path)
	var keys []string
	for i := 0; i < len(path); i++ {
		if path[i] == '/' {
			keys = append(keys, path[:i+1], host+path[:i+1])
		}
	}
	return keys
}

// dirPath is a path with repeated slashes collapsed and a trailing slash, so that prefixes compare by whole
// segments: "/grad" and "/grad/" are both "/grad/", and "/graduate/" does not start with it.
func dirPath(p string) string {
	var b strings.Builder
	b.WriteByte('/')
	for _, seg := range strings.Split(p, "/") {
		if seg != "" {
			b.WriteString(seg)
			b.WriteByte('/')
		}
	}
	return b.String()
}

// WithScope returns a retriever over the same index, configuration and backends whose every search considers
// only the pages in s, before ranking: each page and chunk list (dense and BM25, in process or in the
// VectorStore) is searched among those pages alone, so community selection and the context never see another
// page, and a page that would rank far down the whole site's lists comes first when it is the best allowed one.
// A nil s searches every page. A scope that matches no page of the index (see Scope.Check) finds nothing.
func (r *Retriever) WithScope(s *Scope) *Retriever {
	c := *r
	c.scope, c.allowed = s, nil
	if s != nil {
		c.allowed = make([]bool, len(r.ix.Pages))
		for i, p := range r.ix.Pages {
			c.allowed[i] = s.Match(p.URL)
		}
	}
	return &c
}

// Scope returns the retriever's scope; nil when it searches every page.
func (r *Retriever) Scope() *Scope { return r.scope }

// pageFilter accepts the pages in scope; nil (no filtering) without a scope.
func (r *Retriever) pageFilter() func(page int) bool {
	if r.allowed == nil {
		return nil
	}
	return func(page int) bool { return r.allowed[page] }
}

// chunkFilter accepts the chunks of the pages in scope; nil without a scope.
func (r *Retriever) chunkFilter() func(chunk int) bool {
	if r.allowed == nil {
		return nil
	}
	return func(chunk int) bool { return r.allowed[r.ix.Chunks[chunk].PageID] }
}
