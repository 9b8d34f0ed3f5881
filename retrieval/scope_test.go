package retrieval_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/retrieval"
)

func TestScopeMatch(t *testing.T) {
	tests := []struct {
		name     string
		prefixes []string
		in, out  []string
	}{
		{"path matches whole segments", []string{"/grad"},
			[]string{"https://u.example/grad", "https://u.example/grad/", "https://u.example/grad/apply/", "http://other.example/grad/x.html"},
			[]string{"https://u.example/graduate/", "https://u.example/", "https://u.example/x/grad/"}},
		{"trailing slash is the same prefix", []string{"/grad/"},
			[]string{"https://u.example/grad", "https://u.example/grad/fees?x=1#top"},
			[]string{"https://u.example/graduate"}},
		{"absolute URL: host case, scheme and default port do not matter", []string{"HTTPS://U.Example:443/Grad/"},
			[]string{"http://u.example/Grad/a", "https://U.EXAMPLE/Grad"},
			[]string{"https://v.example/Grad/", "https://u.example/grad/", "https://u.example:8443/Grad/"}},
		{"several prefixes", []string{"/a/b", "https://u.example/c"},
			[]string{"https://x.example/a/b/c", "https://u.example/c/"},
			[]string{"https://x.example/a/", "https://x.example/c/"}},
		{"root", []string{"/"}, []string{"https://u.example/", "https://u.example/a/b"}, nil},
		{"repeated slashes", []string{"/a//b/"}, []string{"https://u.example/a/b/c"}, []string{"https://u.example/a/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := retrieval.NewScope(tt.prefixes...)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range tt.in {
				if !s.Match(u) {
					t.Errorf("%v does not match %s", tt.prefixes, u)
				}
			}
			for _, u := range tt.out {
				if s.Match(u) {
					t.Errorf("%v matches %s", tt.prefixes, u)
				}
			}
		})
	}
}

func TestScopeErrors(t *testing.T) {
	for _, prefixes := range [][]string{nil, {""}, {"grad/"}, {"ftp://u.example/grad"}, {"//u.example/grad"}, {"https:///grad"}, {"/ok", "%zz"}} {
		if _, err := retrieval.NewScope(prefixes...); !errors.Is(err, retrieval.ErrScopePrefix) {
			t.Errorf("NewScope(%q) = %v, want ErrScopePrefix", prefixes, err)
		}
	}
	r, _ := indextest.Shared(t)
	s, err := retrieval.NewScope("/programs/nursing/", "/no-such-section", examples.BaseURL+"admissions")
	if err != nil {
		t.Fatal(err)
	}
	err = s.Check(r.Index())
	if !errors.Is(err, retrieval.ErrScopePrefix) || !strings.Contains(err.Error(), `"/no-such-section"`) ||
		strings.Contains(err.Error(), "nursing") || strings.Contains(err.Error(), "admissions") {
		t.Errorf("Check = %v, want an error naming /no-such-section alone", err)
	}
	ok, _ := retrieval.NewScope("/programs/nursing/", examples.BaseURL+"admissions")
	if err := ok.Check(r.Index()); err != nil {
		t.Errorf("Check of matching prefixes: %v", err)
	}
}

// TestRetrieveScoped retrieves on the example index with scopes: only pages under the prefixes come back, also
// when the best pages of the whole site lie outside them.
func TestRetrieveScoped(t *testing.T) {
	ctx := context.Background()
	r, _ := indextest.Shared(t)
	tests := []struct {
		question string
		prefixes []string
	}{
		{"what are the admission requirements for the nursing program?", []string{"/programs/nursing/"}},
		{"what are the admission requirements for the nursing program?", []string{"/admissions/"}},
		{"how much is tuition for international students?", []string{"/programs/computer-science/", "/programs/data-science"}},
		{"when does the fall semester start?", []string{examples.BaseURL + "news/"}},
	}
	for _, tt := range tests {
		t.Run(tt.question+" in "+strings.Join(tt.prefixes, ","), func(t *testing.T) {
			s, err := retrieval.NewScope(tt.prefixes...)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Check(r.Index()); err != nil {
				t.Fatal(err)
			}
			whole, err := r.Retrieve(ctx, tt.question, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(whole.Pages, func(p retrieval.PageHit) bool { return !s.Match(p.URL) }) {
				t.Fatalf("every page of the unscoped retrieval is in the scope already: %v", pageURLs(whole.Pages))
			}
			res, err := r.WithScope(s).Retrieve(ctx, tt.question, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Pages) == 0 || len(res.Chunks) == 0 {
				t.Fatalf("scoped retrieval found nothing")
			}
			for _, p := range res.Pages {
				if !s.Match(p.URL) {
					t.Errorf("page %s is outside %v", p.URL, tt.prefixes)
				}
			}
			for _, c := range res.Chunks {
				if !s.Match(c.URL) {
					t.Errorf("chunk of %s is outside %v", c.URL, tt.prefixes)
				}
			}
			if !strings.Contains(res.Context, "URL: "+res.Pages[0].URL) {
				t.Errorf("context lacks the first page")
			}
		})
	}
}

// TestScopeBeforeRanking scopes to a single page that ranks far down the whole site's fused list: it comes
// first. A filter applied after ranking would find nothing, since the page is not among the fused pages kept.
func TestScopeBeforeRanking(t *testing.T) {
	ctx := context.Background()
	r, _ := indextest.Shared(t)
	const question = "what are the admission requirements for the nursing program?"
	wide := r.WithConfig(retrieval.Config{PagesPerList: 1000, FusedPages: 1000, KeepPages: 1000, NoCommunities: true,
		KeepChunks: 1000, ContextTokens: 1 << 20})
	all, err := wide.Retrieve(ctx, question, nil)
	if err != nil {
		t.Fatal(err)
	}
	def := r.Config()
	if len(all.Pages) <= def.FusedPages+2 {
		t.Fatalf("only %d pages rank for the question", len(all.Pages))
	}
	far := all.Pages[def.FusedPages+2] // beyond the fused pages the default keeps
	s, err := retrieval.NewScope(far.URL)
	if err != nil {
		t.Fatal(err)
	}
	unscoped, err := r.Retrieve(ctx, question, nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(pageURLs(unscoped.Pages), far.URL) {
		t.Fatalf("%s is in the unscoped result", far.URL)
	}
	res, err := r.WithScope(s).Retrieve(ctx, question, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The page's URL as a prefix also takes the pages below it; the page must still come first.
	if len(res.Pages) == 0 || res.Pages[0].URL != far.URL {
		t.Fatalf("scoped to the page at rank %d, got %v, want %s first", def.FusedPages+3, pageURLs(res.Pages), far.URL)
	}
}

func TestScopeMatchingNothing(t *testing.T) {
	r, _ := indextest.Shared(t)
	s, err := retrieval.NewScope("/no-such-section/")
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.WithScope(s).Retrieve(context.Background(), "how much is tuition?", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pages) != 0 || len(res.Chunks) != 0 || !res.Empty {
		t.Errorf("a scope without pages found %d pages, %d chunks (empty %v)", len(res.Pages), len(res.Chunks), res.Empty)
	}
}

func pageURLs(pages []retrieval.PageHit) []string {
	out := make([]string, len(pages))
	for i, p := range pages {
		out[i] = p.URL
	}
	return out
}
