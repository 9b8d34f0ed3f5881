package markdown

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHeadingTrails(t *testing.T) {
	chunks := []string{
		"# Policies\n\nIntro text.\n\n## Grades\n\nAbout grades.",
		"### Incomplete\n\nAn I grade lapses.\n```\n# not a heading\n```",
		"## Units\n\nFifteen per term.",
		"More on units.",
		// A heading that links elsewhere keeps its text, a permalink anchor goes, and a tab may follow the "#"s.
		"##\t[Self-serve](https://selfserve.example/) tools[¶](https://site.example/p.html#tools)\n\nReset it there.",
		"Or ask.",
	}
	want := []string{"", "Policies > Grades", "Policies > Grades > Incomplete", "Policies > Units", "Policies > Units",
		"Policies > Self-serve tools"}
	if diff := cmp.Diff(want, HeadingTrails(chunks)); diff != "" {
		t.Errorf("HeadingTrails (-want +got):\n%s", diff)
	}
}

func TestStripLinks(t *testing.T) {
	in := `See [MATH 1A](http://x.edu/search/?P=MATH%201A "MATH 1A") and [the (old) page](http://x.edu/a_(b)) or <https://y.org/z> and http://bare.example/p.`
	want := `See MATH 1A and the (old) page or  and `
	if got := StripLinks(in); got != want {
		t.Errorf("StripLinks =\n%q, want\n%q", got, want)
	}
}

func FuzzStripLinks(f *testing.F) {
	for _, s := range []string{"[a](http://x/y)", "see <https://a.b> and (http://c)", "]( unterminated", "[[x]](y)(z)", "plain"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := StripLinks(s)
		if len(out) > len(s) {
			t.Fatalf("StripLinks grew %q to %q", s, out)
		}
		if strings.Contains(out, "](http") {
			t.Fatalf("StripLinks left a link target: %q -> %q", s, out)
		}
	})
}

func TestHeadingLevel(t *testing.T) {
	for line, want := range map[string]int{"# A": 1, "### Fees": 3, "###### six": 6, "####### seven": 0, "#": 1,
		"##\ttab": 2, "   ## indented": 2, "    ## code": 0, "#hashtag": 0, "text # no": 0, "": 0} {
		if got := HeadingLevel(line); got != want {
			t.Errorf("HeadingLevel(%q) = %d, want %d", line, got, want)
		}
	}
}

func TestAnnounces(t *testing.T) {
	for p, want := range map[string]bool{
		"To launch Python 3.7, try the command:":                        true,
		"**Example 10.12. Excerpt of `/etc/bind/named.conf.local`**":    true,
		"  **Table 3. Options** ":                                       true,
		"The file is **important** and **short**":                       false,
		"**Note** the first line is read once.":                         false,
		"****":                                                          false,
		"**Bold** then **bold**":                                        false,
		"The default is `4**2`.":                                        false,
		"Set `max_connections` in **postgresql.conf** before starting.": false,
	} {
		if got := Announces(p); got != want {
			t.Errorf("Announces(%q) = %v, want %v", p, got, want)
		}
	}
}
