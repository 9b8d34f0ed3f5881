package markdown

import (
	"slices"
	"strings"
	"testing"
)

func TestCompactLinks(t *testing.T) {
	const page = "https://docs.example.org/3/library/logging.html"
	for _, tt := range []struct{ in, want string }{
		// An API name's cross-reference on the site keeps its text alone.
		{"Use [`debug()`](https://docs.example.org/3/library/logging.html#logging.debug \"logging.debug\") first.",
			"Use `debug()` first."},
		{"See [`open()`](https://docs.example.org/3/library/functions.html#open).", "See `open()`."},
		// A link to the page itself (its URL heads the page in the context) keeps its text alone.
		{"[Table 8.2](https://docs.example.org/3/library/logging.html#table \"Table 8.2. Levels\") lists them.",
			"Table 8.2 lists them."},
		// Other links keep their target and lose their title.
		{"Read [Custom Levels](https://docs.example.org/3/howto/logging.html#custom-levels \"Custom\").",
			"Read [Custom Levels](https://docs.example.org/3/howto/logging.html#custom-levels)."},
		{"Report it on [`bugs.python.org`](https://bugs.example.com/issue1).",
			"Report it on [`bugs.python.org`](https://bugs.example.com/issue1)."},
		{"Apply with [the form](<https://docs.example.org/form a.html>).",
			"Apply with [the form](<https://docs.example.org/form a.html>)."},
		{"Apply with [the form](<https://docs.example.org/form(1).html> 'Form').",
			"Apply with [the form](<https://docs.example.org/form(1).html>)."},
		// Images, relative targets, broken links and plain brackets stay as they are.
		{"![logo](https://docs.example.org/logo.png \"Logo\") [x](page.html) [a] (b) [c](https://x.org",
			"![logo](https://docs.example.org/logo.png \"Logo\") [x](page.html) [a] (b) [c](https://x.org"},
		{"no links at all", "no links at all"},
	} {
		if got := CompactLinks(tt.in, page); got != tt.want {
			t.Errorf("CompactLinks(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func TestLinks(t *testing.T) {
	var got []Link
	s := "a [x](https://e.org/a#b \"t\") [![i](https://e.org/i.png)](https://e.org/c) [y](rel.html) [z](https://e.org/d)"
	for l := range Links(s) {
		got = append(got, l)
	}
	want := []Link{
		{Text: "x", Target: "https://e.org/a#b", Start: 2, End: 28},
		{Text: "z", Target: "https://e.org/d", Start: 88, End: 108},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Links = %+v, want %+v", got, want)
	}
	for _, l := range got {
		if s[l.Start] != '[' || s[l.End-1] != ')' {
			t.Errorf("link %+v does not span its markdown", l)
		}
	}
}

func TestSpans(t *testing.T) {
	s := "See [E.5.1. Migration to 15.5](https://x.example/r.html#m) and `a.b()`, [not a link] or `open"
	got := Spans(s)
	want := [][2]int{{4, strings.Index(s, ")") + 1}, {strings.Index(s, "`a"), strings.Index(s, "()`") + 3}}
	if !slices.Equal(got, want) {
		t.Fatalf("Spans = %v, want %v", got, want)
	}
	if sp, ok := SpanAt(got, strings.Index(s, "Migration")); !ok || sp != want[0] {
		t.Errorf("SpanAt(inside the link) = %v %v", sp, ok)
	}
	if _, ok := SpanAt(got, 4); ok {
		t.Error("a span's first byte is not inside it")
	}
	if _, ok := SpanAt(got, strings.Index(s, "not a")); ok {
		t.Error("brackets without a target are no span")
	}
}
