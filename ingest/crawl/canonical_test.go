package crawl

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/siteurl"
)

func TestCanonical(t *testing.T) {
	base, err := url.Parse("http://Guide.Berkeley.edu/2016-17/undergraduate/degree-programs/bioengineering/")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, href string
		want       string
		ok         bool
	}{
		{"root relative", "/2016-17/academic-calendar/", "http://guide.berkeley.edu/2016-17/academic-calendar/", true},
		{"directory without slash", "/2016-17/academic-calendar", "http://guide.berkeley.edu/2016-17/academic-calendar/", true},
		{"index.html folded", "/2016-17/academic-calendar/index.html", "http://guide.berkeley.edu/2016-17/academic-calendar/", true},
		{"index.htm folded", "/a/INDEX.HTM", "http://guide.berkeley.edu/a/", true},
		{"relative file", "bioengineering.pdf", "http://guide.berkeley.edu/2016-17/undergraduate/degree-programs/bioengineering/bioengineering.pdf", true},
		{"dot segments", "../../departments/./x/", "http://guide.berkeley.edu/2016-17/undergraduate/departments/x/", true},
		{"fragment dropped", "/a/b/#tabs", "http://guide.berkeley.edu/a/b/", true},
		{"fragment only is the page", "#coursestextcontainer", "http://guide.berkeley.edu/2016-17/undergraduate/degree-programs/bioengineering/", true},
		{"empty href is the page", "", "http://guide.berkeley.edu/2016-17/undergraduate/degree-programs/bioengineering/", true},
		{"scheme and host lowercased", "HTTPS://WWW.Example.COM/X/", "https://www.example.com/X/", true},
		{"default http port", "http://example.com:80/a", "http://example.com/a/", true},
		{"default https port", "https://example.com:443/a.html", "https://example.com/a.html", true},
		{"other port kept", "http://127.0.0.1:8080/a", "http://127.0.0.1:8080/a/", true},
		{"ipv6 host", "http://[::1]:8080/", "http://[::1]:8080/", true},
		{"query sorted", "/s/?b=2&a=1&a=0", "http://guide.berkeley.edu/s/?a=1&a=0&b=2", true},
		{"tracking params dropped", "/s/?utm_source=x&id=7&fbclid=abc&gclid=1", "http://guide.berkeley.edu/s/?id=7", true},
		{"only tracking params", "/s?utm_medium=email", "http://guide.berkeley.edu/s/", true},
		{"user info dropped", "http://user:pw@example.com/", "http://example.com/", true},
		{"repeated slashes", "//example.com//a///b", "http://example.com/a/b/", true},
		{"whitespace trimmed", "  /a/b.html \n", "http://guide.berkeley.edu/a/b.html", true},
		{"file with extension keeps no slash", "/a/b.html", "http://guide.berkeley.edu/a/b.html", true},
		{"mailto", "mailto:bioeng@berkeley.edu", "", false},
		{"javascript", "javascript:void(0)", "", false},
		{"tel", "tel:5106425833", "", false},
		{"ftp", "ftp://example.com/file", "", false},
		{"bad escape", "http://example.com/%zz", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Canonical(base, tt.href)
			if ok != tt.ok {
				t.Fatalf("Canonical(%q) ok = %v, want %v (got %q)", tt.href, ok, tt.ok, got)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Canonical(%q) (-want +got):\n%s", tt.href, diff)
			}
		})
	}
}

func TestCanonicalIsIdempotent(t *testing.T) {
	for _, in := range []string{
		"http://guide.berkeley.edu/2016-17/",
		"https://example.com/a/b.pdf?x=1&a=2",
		"http://127.0.0.1:4000/a/",
	} {
		once, ok := Canonical(nil, in)
		if !ok {
			t.Fatalf("Canonical(%q) not ok", in)
		}
		twice, _ := Canonical(nil, once)
		if once != twice {
			t.Errorf("Canonical is not idempotent: %q -> %q -> %q", in, once, twice)
		}
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"/a/b", "index.html", "http://x.org:80/?b=1&a=2#f", "../..//x", "?utm_source=1", "http://[::1]/",
		"https://[2001:DB8::1]:8443/a?q=1", "HTTP://User@Example.ORG:8080"} {
		f.Add(s)
	}
	base, _ := url.Parse("http://example.org/dir/page/")
	f.Fuzz(func(t *testing.T, href string) {
		got, ok := Canonical(base, href)
		if !ok {
			return
		}
		again, ok := Canonical(nil, got)
		if !ok || again != got {
			t.Fatalf("Canonical(%q) = %q, which canonicalises to %q (ok=%v)", href, got, again, ok)
		}
		// A canonical URL's host is read without parsing it; it is the host siteurl names every URL's by.
		if h, want := hostOf(got), siteurl.HostOf(got); h != want {
			t.Fatalf("hostOf(%q) = %q, siteurl.HostOf %q", got, h, want)
		}
	})
}

// FuzzCanonicalFast checks the fast path for root-relative links against the
// general one.
func FuzzCanonicalFast(f *testing.F) {
	for _, s := range []string{"/a/b", "/a/../b/index.html", "/x.pdf#p", "/a//b/./c", "/~u/a,b"} {
		f.Add(s)
	}
	bases := []string{"http://Example.org:80/dir/", "https://[::1]:8443/x", "http://127.0.0.1:4000/"}
	f.Fuzz(func(t *testing.T, href string) {
		for _, b := range bases {
			base, _ := url.Parse(b)
			fast, ok := canonicalFast(base, href)
			if !ok {
				continue
			}
			ref, err := url.Parse(href)
			if err != nil {
				t.Fatalf("fast path accepted %q, which does not parse", href)
			}
			u := base.ResolveReference(ref)
			scheme, host, _ := canonicalOrigin(u)
			slow := (&url.URL{Scheme: scheme, Host: host, Path: canonicalPath(u.Path), RawQuery: u.RawQuery}).String()
			if fast != slow {
				t.Fatalf("base %s href %q: fast %q, general %q", b, href, fast, slow)
			}
		}
	})
}
