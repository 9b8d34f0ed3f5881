package retrieval

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ragproxy/ragproxy/index"
)

func TestTitleIndexNames(t *testing.T) {
	pages := []index.Page{
		{ID: 0, Title: "Economics (ECON)"},
		{ID: 1, Title: "Biology (General)"},
		{ID: 2, Title: "Chemistry (Department of)"},
		{ID: 3, Title: "The Joy of Feedback (2022 Infra Survey)"},
		{ID: 4, Title: "Mass Communications (MASSCOM - defunct)"},
		{ID: 5, Title: "Letters and Science (L & S)"},
		{ID: 6, Title: "Visual Studies (VIS STD)"},
	}
	ix := newTitleIndex(pages, func(int) string { return "en" })
	for _, c := range []struct {
		query string
		want  []int
	}{
		{"who teaches econ 133", []int{0}},
		{"general education requirements", nil},       // "(General)" is not a name of the biology page
		{"which department handles transcripts", nil}, // nor "(Department of)" of chemistry's
		{"how many people answered the 2022 infra survey", nil},
		{"was masscom a course", []int{4}}, // the code before " - defunct"
		{"l & s breadth", []int{5}},
		{"vis std courses", []int{6}},
		{"biology majors", []int{1}}, // the title outside the parentheses still names it
		{"the joy of feedback", []int{3}},
	} {
		if got := ix.search(c.query, 10, nil); !cmp.Equal(got, c.want, cmpopts.EquateEmpty()) {
			t.Errorf("search(%q) = %v, want %v", c.query, got, c.want)
		}
	}
}

// A title is analysed in its page's language, and so is the query for it: German stems bring a question's
// inflected words to the title's, which the English analysis leaves apart.
func TestTitleIndexLanguages(t *testing.T) {
	pages := []index.Page{
		{ID: 0, Title: "Absätze formatieren"},
		{ID: 1, Title: "Paragraph formatting"},
		{ID: 2, Title: "設定ファイル"},
	}
	langs := []string{"de", "en", "ja"}
	for _, c := range []struct {
		lang  func(int) string
		query string
		want  []int
	}{
		{func(p int) string { return langs[p] }, "Wie formatiere ich einen Absatz?", []int{0}},
		{func(p int) string { return langs[p] }, "how do I change paragraph formatting", []int{1}},
		{func(p int) string { return langs[p] }, "設定ファイルはどこですか", []int{2}},
		{func(int) string { return "" }, "Wie formatiere ich einen Absatz?", nil}, // every title read as English
	} {
		ix := newTitleIndex(pages, c.lang)
		if got := ix.search(c.query, 10, nil); !cmp.Equal(got, c.want, cmpopts.EquateEmpty()) {
			t.Errorf("search(%q) = %v, want %v", c.query, got, c.want)
		}
	}
}

func TestTitleCode(t *testing.T) {
	for in, want := range map[string]string{
		"ECON": "ECON", "VIS STD": "VIS STD", "L & S": "L & S", "L&S": "L&S", "MASSCOM - defunct": "MASSCOM",
		"General": "", "Department of": "", "2022 Infra Survey": "", "self serve": "", "&": "", "2022": "",
	} {
		if got := titleCode(in); got != want {
			t.Errorf("titleCode(%q) = %q, want %q", in, got, want)
		}
	}
}
