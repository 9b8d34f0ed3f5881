package retrieval

import (
	"regexp"
	"sort"
	"strings"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval/lexical"
	"github.com/ragproxy/ragproxy/textnorm"
)

// titleIndex finds pages whose whole title a query names: "tell me about the cognitive science major" names the
// page titled "Cognitive Science", "who teaches econ 133" names "Economics (ECON)" by its code. Questions about
// a program, office or subject name it far more reliably than they share words with its text. A title is
// analysed in its page's language and a query, for each title, in the same one: a German question names
// "Absätze formatieren" when it asks "wie formatiere ich Absätze", which only German stems bring together.
type titleIndex struct {
	an       lexical.Analyzer
	variants []titleVariant
}

type titleVariant struct {
	page  int
	lang  string   // the page's language; "" for English
	terms []string // distinct analysed terms
}

var parenRE = regexp.MustCompile(`\(([^)]*)\)`)

// newTitleIndex indexes the titles of pages, each in the language lang gives for it.
func newTitleIndex(pages []index.Page, lang func(page int) string) *titleIndex {
	t := &titleIndex{}
	for _, p := range pages {
		pl := lang(p.ID)
		if textnorm.IsEnglish(pl) {
			pl = ""
		}
		main := strings.TrimSpace(parenRE.ReplaceAllString(p.Title, " "))
		forms := []string{main}
		for _, m := range parenRE.FindAllStringSubmatch(p.Title, -1) {
			if code := titleCode(m[1]); code != "" {
				forms = append(forms, code)
			}
		}
		for _, f := range forms {
			terms := distinct(t.an.TermsIn(pl, f))
			if len(terms) > 0 {
				t.variants = append(t.variants, titleVariant{page: p.ID, lang: pl, terms: terms})
			}
		}
	}
	return t
}

// titleCode is the code a title gives in parentheses: its words written in capitals ("ECON", "VIS STD", "L & S",
// "MASSCOM" of "MASSCOM - defunct"), or "" when it has none. Other parenthesised words are not a name of the
// page: with "(General)", "(Department of)" or "(2022 Infra Survey)" as names, every question saying "general"
// or "department", or asking about that survey, named the page outright.
func titleCode(s string) string {
	var code []string
	for _, w := range strings.Fields(s) {
		if strings.ToUpper(w) == w && strings.ToLower(w) != w || w == "&" {
			code = append(code, w)
		}
	}
	if len(code) == 1 && code[0] == "&" {
		return ""
	}
	return strings.Join(code, " ")
}

func distinct(ts []string) []string {
	seen := map[string]bool{}
	out := ts[:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// search returns the pages with a title form whose every term occurs in query, longest titles first; with a
// filter, only pages it accepts.
func (t *titleIndex) search(query string, k int, filter func(page int) bool) []int {
	// The query's terms in each language a title is written in, as the titles come.
	byLang := map[string]map[string]bool{}
	terms := func(lang string) map[string]bool {
		q, ok := byLang[lang]
		if !ok {
			q = map[string]bool{}
			for _, term := range t.an.TermsIn(lang, query) {
				q[term] = true
			}
			byLang[lang] = q
		}
		return q
	}
	type hit struct{ page, n int }
	best := map[int]int{}
	var english map[string]bool
	for _, v := range t.variants {
		var q map[string]bool
		if v.lang == "" { // nearly every title of most sites: no lookup by language
			if english == nil {
				english = terms("")
			}
			q = english
		} else {
			q = terms(v.lang)
		}
		all := true
		for _, term := range v.terms {
			if !q[term] {
				all = false
				break
			}
		}
		if all && len(v.terms) > best[v.page] && (filter == nil || filter(v.page)) {
			best[v.page] = len(v.terms)
		}
	}
	hits := make([]hit, 0, len(best))
	for p, n := range best {
		hits = append(hits, hit{p, n})
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].n != hits[j].n {
			return hits[i].n > hits[j].n
		}
		return hits[i].page < hits[j].page
	})
	out := make([]int, 0, min(k, len(hits)))
	for _, h := range hits {
		if len(out) == k {
			break
		}
		out = append(out, h.page)
	}
	return out
}
