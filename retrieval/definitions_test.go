package retrieval

import (
	"slices"
	"testing"

	"github.com/ragproxy/ragproxy/index"
)

func TestCodeNames(t *testing.T) {
	for q, want := range map[string][]string{
		"max() on an empty list throws ValueError":            {"max", "valueerror"},
		"used dict.fromkeys(names, []) and now appending":     {"dict.fromkeys"},
		"what is typing.TYPE_CHECKING set to at run time?":    {"typing.type_checking"},
		"default max_connections value?":                      {"max_connections"},
		"the password is in my ~/.pgpass file":                {".pgpass"},
		"does a NamedTemporaryFile get deleted":               {"namedtemporaryfile"},
		"i named it self.__token, what's going on":            {"self.__token"},
		"how do i open a file in python 3.11?":                nil, // plain words and a version are not names
		"When does instruction start for Fall 2016? e.g. Aug": nil,
		"what does (buffering=1) mean":                        nil,
	} {
		if got := codeNames(q); !slices.Equal(got, want) {
			t.Errorf("codeNames(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestDefiningPages(t *testing.T) {
	const site = "https://docs.example.org/"
	ix := &index.Index{Pages: []index.Page{
		{URL: site + "functions.html", Markdown: "# Built-in functions\n\n`max(iterable)` returns the largest item."},
		{URL: site + "logging.html", Markdown: "# logging\n\nLevels: [`ERROR`](" + site + "logging.html#logging.ERROR)."},
		// A changelog names max() most often, and links it to its definition each time.
		{URL: site + "changes.html", Markdown: "# Changes\n\n[`max()`](" + site + "functions.html#max) takes a " +
			"default. [`max()`](" + site + "functions.html#max) is faster. [`max()`](" + site + "changes.html#m) " +
			"in the changelog. [max](" + site + "changes.html#n) as plain text and [`max()`](" + site +
			"changes.html) without a fragment do not count."},
	}}
	for i := range ix.Pages {
		ix.Pages[i].ID = i
	}
	lx, err := newLexicon(ix)
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string][]int{
		"can max() return a fallback value?": {0, 2}, // the most linked definition first
		"what number is logging.ERROR":       {1},    // found by the last part of its name
		"what is the biggest max value":      nil,    // "max" is not written as code
		"is str.join() fast":                 nil,    // a name the site does not link
	} {
		if got := lx.definingPages(q, 8, nil); !slices.Equal(got, want) {
			t.Errorf("definingPages(%q) = %v, want %v", q, got, want)
		}
	}
	if got := lx.definingPages("max()", 8, func(p int) bool { return p != 0 }); !slices.Equal(got, []int{2}) {
		t.Errorf("definingPages with a filter = %v, want [2]", got)
	}
	if got := lx.definingPages("max()", 1, nil); !slices.Equal(got, []int{0}) {
		t.Errorf("definingPages(k=1) = %v, want [0]", got)
	}
}
