package siteurl

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHost(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://Example.ORG/a", "example.org"},
		{"https://example.org:443/a", "example.org"},
		{"http://example.org:80/", "example.org"},
		{"HTTP://example.org:80/", "example.org"},
		{"http://example.org:443/", "example.org:443"}, // not http's default
		{"https://example.org:8443/", "example.org:8443"},
		{"https://user:pw@example.org/", "example.org"},
		{"http://[::1]/", "[::1]"},
		{"http://[::1]:80/", "[::1]"},
		{"http://[2001:DB8::1]:8080/", "[2001:db8::1]:8080"},
		{"http://127.0.0.1:8080/x", "127.0.0.1:8080"},
		{"/relative/path", ""},
		{"mailto:someone@example.org", ""},
		{"http://exa mple.org/", ""}, // does not parse
	}
	for _, tt := range tests {
		if got := HostOf(tt.in); got != tt.want {
			t.Errorf("HostOf(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if u, err := url.Parse(tt.in); err == nil {
			if got := Host(u); got != tt.want {
				t.Errorf("Host(%q) = %q, want %q", tt.in, got, tt.want)
			}
		}
	}
}

func TestDomain(t *testing.T) {
	tests := []struct{ host, want string }{
		{"www.example.org", "example.org"},
		{"help.example.org:8080", "example.org"},
		{"example.co.uk", "example.co.uk"},
		{"a.b.example.co.uk", "example.co.uk"},
		{"localhost", "localhost"},
		{"localhost:3000", "localhost"},
		{"127.0.0.1:8080", "127.0.0.1"},
		{"10.0.0.1", "10.0.0.1"},
		{"[::1]:8080", "[::1]"},
		{"[2001:db8::1]", "[2001:db8::1]"},
	}
	for _, tt := range tests {
		if got := Domain(tt.host); got != tt.want {
			t.Errorf("Domain(%q) = %q, want %q", tt.host, got, tt.want)
		}
	}
	same := []struct {
		a, b string
		want bool
	}{
		{"www.example.org", "help.example.org", true},
		{"example.org", "example.org:8080", true},
		{"example.org", "example.com", false},
		{"foo.github.io", "bar.github.io", false}, // a public suffix: two sites
		{"127.0.0.1", "10.0.0.1", false},          // addresses are their own sites
		{"127.0.0.1:8080", "127.0.0.1:9090", true},
	}
	for _, tt := range same {
		if got := Domain(tt.a) == Domain(tt.b); got != tt.want {
			t.Errorf("one site %q, %q = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestParseLink(t *testing.T) {
	tests := []struct {
		in   string
		want Link
		ok   bool
	}{
		{"https://www.Example.org/fees/", Link{"example.org/fees", "https", "example.org"}, true},
		{"http://example.org:80/fees#cost", Link{"example.org/fees", "http", "example.org"}, true},
		{"https://example.org/fees.", Link{"example.org/fees", "https", "example.org"}, true},
		{"//example.org/fees", Link{"example.org/fees", "https", "example.org"}, true},
		{"www.example.org/fees", Link{"example.org/fees", "https", "example.org"}, true},
		{"https://example.org/fees?year=2025", Link{"example.org/fees?year=2025", "https", "example.org"}, true},
		{"https://example.org:8443/", Link{"example.org:8443", "https", "example.org:8443"}, true},
		{"http://[::1]:8080/a", Link{"[::1]:8080/a", "http", "[::1]:8080"}, true},
		{"MAILTO:Admissions@Example.org?subject=hi", Link{"mailto:admissions@example.org", "mailto", ""}, true},
		{"mailto:", Link{}, false}, // the colon is trailing punctuation: "mailto" is a relative link
		{"javascript:alert(1)", Link{}, false},
		{"data:text/html,hi", Link{}, false},
		{"/fees", Link{}, false},
		{"https://user@example.org/", Link{}, false},
		{"ftp://example.org/file", Link{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseLink(tt.in)
		if ok != tt.ok {
			t.Errorf("ParseLink(%q) ok = %v, want %v", tt.in, ok, tt.ok)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseLink(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
	// Links differing only in what does not identify a page share a key; others do not.
	a, _ := ParseLink("https://example.org/fees")
	for _, same := range []string{"http://www.example.org/fees/", "https://EXAMPLE.org:443/fees#x", "//example.org/fees"} {
		if b, _ := ParseLink(same); b.Key != a.Key {
			t.Errorf("%q: key %q, want %q", same, b.Key, a.Key)
		}
	}
	for _, other := range []string{"https://example.org/fee", "https://example.org/fees?x=1", "https://example.org:8443/fees"} {
		if b, _ := ParseLink(other); b.Key == a.Key {
			t.Errorf("%q shares the key %q", other, a.Key)
		}
	}
}
