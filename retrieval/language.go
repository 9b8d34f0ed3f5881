package retrieval

import (
	"math"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/textnorm"
)

// Languages are the languages of the retriever's index, the site's main language (most pages) first.
func (r *Retriever) Languages() []string {
	if r.langs != nil {
		return r.langs
	}
	return siteLanguages(r.ix)
}

func siteLanguages(ix *index.Index) []string {
	if out := ix.LanguageTags(); out != nil {
		return out
	}
	return []string{"en"}
}

// QuestionLanguage is the language a question is analysed in: the site's own language when the site has one;
// else the language among the site's that the question's script or words tell (textnorm.DetectQuestion), and
// the site's main language when they do not tell it surely (a short question, or one of commands and names).
// When its stopwords are as many in several languages, the one whose pages on this site use its other words most
// (lexical.BM25.LanguageFit) is chosen rather than the detector's trigrams: "a cosa serve la directory /srv?"
// holds Italian's and Spanish's "a" and "la", and its trigrams read Spanish, but the Italian pages write
// "directory" and "serve" more often than the Spanish ones, which write "directorio" and "sirve".
func (r *Retriever) QuestionLanguage(question string) string {
	langs := r.Languages()
	l, ok, tied := textnorm.DetectQuestionTie(question, langs)
	if len(tied) > 1 && r.chunkBM25 != nil {
		best := math.Inf(-1)
		for _, t := range tied {
			if fit, known := r.chunkBM25.LanguageFit(t, question); known && fit > best {
				l, ok, best = t, true, fit
			}
		}
	}
	if ok {
		return l
	}
	return langs[0]
}

// inLanguage is r searching for questions in lang: its BM25 lists analyse queries as lang's text and the pages
// it keeps are, where a page has a version in lang, that version. English queries keep r as it is.
func (r *Retriever) inLanguage(lang string) *Retriever {
	if textnorm.IsEnglish(lang) && !r.versioned {
		return r
	}
	c := *r
	c.qlang = lang
	if textnorm.IsEnglish(lang) {
		c.qlang = ""
	}
	return &c
}

// preferVersions replaces each fused page that has a version in the question's language (r.qlang, English for
// "") by that version, keeping the better score when both were found.
func (r *Retriever) preferVersions(fused []scored) []scored {
	if !r.versioned {
		return fused
	}
	want := r.qlang
	if want == "" {
		want = "en"
	}
	at := map[int]int{}
	out := fused[:0:0]
	for _, s := range fused {
		id := s.id
		if r.ix.PageLang(id) != want {
			for _, v := range r.ix.Pages[id].Versions {
				if r.ix.PageLang(v) == want {
					id = v
					break
				}
			}
		}
		if k, ok := at[id]; ok {
			out[k].score = max(out[k].score, s.score)
			continue
		}
		at[id] = len(out)
		out = append(out, scored{id: id, score: s.score})
	}
	return out
}

// LanguageName is the English name of the language lang names ("German" for "de"), or lang itself when it names
// none.
func LanguageName(lang string) string {
	if n := textnorm.Name(lang); n != "" {
		return n
	}
	return lang
}
