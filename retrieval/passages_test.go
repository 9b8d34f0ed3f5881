package retrieval

import (
	"context"
	"fmt"
	"math/bits"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/markdown"
	"github.com/ragproxy/ragproxy/textnorm"
	"github.com/ragproxy/ragproxy/tokenizer"
)

// filler returns n words that are neither stopwords nor the tests' question terms, starting at the i-th.
func filler(i, n int) string {
	words := strings.Fields("river lantern meadow copper violet harbor pepper saddle ember orchard basalt " +
		"falcon marble thistle canyon juniper quartz willow tundra beacon cobalt fennel glacier hazel")
	out := make([]string, n)
	for k := range out {
		out[k] = words[(i+k)%len(words)]
	}
	return strings.Join(out, " ")
}

func TestPassageCoverage(t *testing.T) {
	q := newPassageQuery("When does instruction begin in the fall term?", nil) // instruct, begin, fall, term
	tests := []struct {
		name string
		text string
		want float64
	}{
		{"terms together", "Fall instruction will begin soon.", 0.75},
		{"terms apart", "Fall " + filler(0, 25) + " instruction " + filler(0, 25) + " begins.", 0.25},
		{"stopwords do not count in the window", "Fall" + strings.Repeat(" the", 40) + " instruction begins.", 0.75},
		{"links are not words", "Fall [x](https://s.example/" + strings.Repeat("a/", 30) + ") instruction begins.", 0.75},
		// The row is far from the header, but a row is read with its table's header.
		{"table row with its header", "| Term | Date |\n|---|---|\n" + strings.Repeat("| "+filler(0, 6)+" | "+filler(6, 3)+" |\n", 5) +
			"| Instruction begins | August 24 |\n", 0.75},
		{"a table without a separator has no header", "| Term | Date |\n" + strings.Repeat("| "+filler(0, 6)+" | "+filler(6, 3)+" |\n", 5) +
			"| Instruction begins | August 24 |\n", 0.5},
		{"none", filler(0, 10), 0},
		// A window stays within a section and its subsections.
		{"a window does not run into the next section", "## Fall term\n\nAll about it.\n\n## Instruction\n\nIt begins.", 0.5},
		{"a window runs into a subsection", "## Fall term\n\n### Instruction\n\nIt begins.", 1},
		{"a heading closes the subsections of the section before", "## Fall\n\n### Term\n\n## Instruction\n\nIt begins.", 0.5},
		{"a heading's own words count with its section", "## Fall term instruction\n\n### Dates\n\nbegins", 1},
		{"a hash that starts no heading", "#fall term\n\n#instruction begins", 1},
		{"a comment in a code block is no heading", "## Fall term\n\n```\n# instruction\n```\n\nbegins", 1},
	}
	for _, tt := range tests {
		if _, got := q.coverage(tt.text); got != tt.want {
			t.Errorf("%s: coverage = %v, want %v", tt.name, got, tt.want)
		}
	}
	q.acrossSections = true
	if _, got := q.coverage("## Fall term\n\nAll about it.\n\n## Instruction\n\nIt begins."); got != 1 {
		t.Errorf("across sections: coverage = %v, want 1", got)
	}
	if q := newPassageQuery("what is it?", nil); q.n != 0 {
		t.Errorf("a question of stopwords has %d terms", q.n)
	}
}

// A question word's other spellings on the site count as that word in passages.
func TestPassageCoverageForms(t *testing.T) {
	forms := func(w string) []string {
		return map[string][]string{"pasword": {"password", "passwords"}, "reset": {"key"}, "cs61b": {"cs", "61b"}}[w]
	}
	q := newPassageQuery("pasword reset key for cs61b", forms) // pasword, reset, key, cs61b
	if q.n != 4 {
		t.Fatalf("%d terms, want 4: forms must not add terms", q.n)
	}
	for text, want := range map[string]float64{
		"Your password reset key.": 0.75,
		"Passwords are reset.":     0.5,
		"The key opens CS 61B.":    0.5,  // "key" is the question's own term, not reset's
		"Reset, reset, reset.":     0.25, // one term however often
	} {
		if _, got := q.coverage(text); got != want {
			t.Errorf("coverage(%q) = %v, want %v", text, got, want)
		}
	}
	if _, got := newPassageQuery("pasword reset", nil).coverage("Your password reset key."); got != 0.5 {
		t.Errorf("without forms: coverage = %v, want 0.5", got)
	}
}

// TestListingPassages: a listing page puts posts side by side, each under its own heading, so that the end of
// one post's excerpt and the title of the next hold the question's terms together, a passage no page holds. The
// post that states the fact must outrank the listing, which led the fused ranking; with windows across sections
// (NoSectionPassages) the listing keeps the lead.
func TestListingPassages(t *testing.T) {
	const question = "when is the gadget recall refund deadline?" // gadget, recall, refund, deadlin
	ix := &index.Index{Chunks: []index.Chunk{
		{ID: 0, PageID: 0, Text: "# News\n\n## Gadget recall\n\nOwners of the gadget may ask for a refund …\n\n" +
			"## Deadline for talk proposals\n\nProposals for the autumn meeting are due soon …"},
		{ID: 1, PageID: 1, Text: "# Gadget recall\n\nOwners of the gadget may ask for a refund until the deadline of " +
			"March 3.\n\n## Shipping\n\nSend the gadget back in its box."},
		{ID: 2, PageID: 2, Text: "# Talk proposals\n\nThe deadline for proposals is May 1."},
	}}
	fused := []scored{{0, 1.0}, {1, 0.9}, {2, 0.5}} // the listing first
	cands := []scored{{0, 1.0}, {1, 0.9}, {2, 0.5}}
	for _, across := range []bool{false, true} {
		r := &Retriever{ix: ix, lex: newEmptyLexicon(), cfg: Config{NoSectionPassages: across}.withDefaults()}
		_, cover, err := r.selectPassages([]string{question}, cands, r.newChunkTexts())
		if err != nil {
			t.Fatal(err)
		}
		got := r.rankByPassages(fused, cover)[0].id
		if want := map[bool]int{false: 1, true: 0}[across]; got != want {
			t.Errorf("NoSectionPassages %v: first page %d, want %d (coverage %v)", across, got, want, cover)
		}
	}
}

// TestPassageRerankLongPage: on a long page, short chunks that repeat the question's words apart outrank, in the
// fused chunk order, the long chunk whose one sentence answers; within a tight budget only passage selection
// puts the answer in the context.
// testSite builds a small index page by page, its vectors from the local embedder fitted to it.
type testSite struct {
	ix    *index.Index
	tok   *tokenizer.Tokenizer
	texts []string
}

func newTestSite(t *testing.T) *testSite {
	t.Helper()
	tok, err := tokenizer.New()
	if err != nil {
		t.Fatal(err)
	}
	return &testSite{ix: &index.Index{}, tok: tok}
}

func (s *testSite) addPage(title string, chunks []string) {
	ix := s.ix
	p := index.Page{ID: len(ix.Pages), URL: fmt.Sprintf("https://s.example/p%d/", len(ix.Pages)), Title: title,
		Summary: title}
	for i, text := range chunks {
		id := len(ix.Chunks)
		ix.Chunks = append(ix.Chunks, index.Chunk{ID: id, PageID: p.ID, Ord: i, Text: text, Tokens: s.tok.Count(text)})
		p.Chunks = append(p.Chunks, id)
		p.Markdown += text + "\n\n"
		s.texts = append(s.texts, index.SearchText(title, "", text))
	}
	ix.Pages = append(ix.Pages, p)
}

// retriever embeds the site's chunks and titles and returns its retriever.
func (s *testSite) retriever(t *testing.T, cfg Config) *Retriever {
	t.Helper()
	ix := s.ix
	emb, vecs, err := embedding.FitEmbed(context.Background(), s.texts, embedding.LocalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ix.ChunkVectors = vecs
	var titles []string
	for _, p := range ix.Pages {
		titles = append(titles, p.Title)
	}
	if ix.SummaryVectors, err = emb.Embed(context.Background(), titles); err != nil {
		t.Fatal(err)
	}
	ix.Manifest = index.Manifest{Embedder: emb.Name(), Dimension: emb.Dimension(), Pages: len(ix.Pages), Chunks: len(ix.Chunks)}
	r, err := New(ix, emb, s.tok, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestPassageRerankLongPage(t *testing.T) {
	const question = "how many advanced widget credits do students complete?"
	const fact = "Students complete 42 credits of advanced widget coursework."
	site := newTestSite(t)
	// Each short chunk names the question's words, each about 22 words from the next.
	var chunks []string
	for i := range 6 {
		chunks = append(chunks, fmt.Sprintf("## Widget program %d\n\nWidget credits %s. Students %s. Complete %s. Advanced widget.",
			i, filler(i, 22), filler(i+3, 22), filler(i+6, 22)))
	}
	// The answer is one sentence in a long chunk.
	var long []string
	for i := range 30 {
		long = append(long, filler(i, 12)+".")
	}
	long[15] = fact
	chunks = append(chunks, "## Requirements\n\n"+strings.Join(long, " "))
	site.addPage("Widget Program", chunks)
	site.addPage("Campus Map", []string{"## Map\n\n" + filler(0, 40), "## Parking\n\n" + filler(5, 40)})

	// The budget holds the long chunk or the short ones, not both.
	budget := site.ix.Chunks[6].Tokens + 100
	base := site.retriever(t, Config{ContextTokens: budget, NoWordNet: true})
	a, _ := Heuristic{}.Analyze(context.Background(), []Message{{Role: "user", Content: question}})
	for _, off := range []bool{true, false} {
		r := base.WithConfig(Config{ContextTokens: budget, NoWordNet: true, NoPassageRerank: off})
		res, err := r.Retrieve(context.Background(), question, a.Rewrites)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Contains(res.Context, fact), !off; got != want {
			t.Errorf("NoPassageRerank %v: fact in the context = %v, want %v (chunks %d)", off, got, want, len(res.Chunks))
		}
	}
}

// TestContextCompactLinks checks that the context writes a chunk's links to its own page and its code
// cross-references as their text (markdown.CompactLinks), counts the chunk at that size, and so fits passages
// that their links' targets would have kept out.
func TestContextCompactLinks(t *testing.T) {
	const question = "which widget functions convert lantern values?"
	site := newTestSite(t)
	refs := func(page int) string {
		var b strings.Builder
		for i := range 12 {
			fmt.Fprintf(&b, " [`widget.convert_%d()`](https://s.example/p%d/#widget.convert_%d \"widget.convert_%d\")", i, page, i, i)
		}
		return b.String()
	}
	site.addPage("Widget functions", []string{
		"## Converting\n\nWidget functions convert lantern values:" + refs(0) + ". See [the guide](https://guide.example/widgets).",
		"## More converting\n\nOther widget functions convert lantern values too:" + refs(1) + ".",
	})
	site.addPage("Campus Map", []string{"## Map\n\n" + filler(0, 40)})
	ix := site.ix
	// The budget holds both chunks as the context writes them, not as the index holds them.
	budget := ix.Chunks[0].Tokens + ix.Chunks[1].Tokens - 100
	r := site.retriever(t, Config{ContextTokens: budget, NoWordNet: true})
	a, _ := Heuristic{}.Analyze(context.Background(), []Message{{Role: "user", Content: question}})
	res, err := r.Retrieve(context.Background(), question, a.Rewrites)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`widget.convert_3()`", "Other widget functions", "[the guide](https://guide.example/widgets)"} {
		if !strings.Contains(res.Context, want) {
			t.Errorf("context lacks %q:\n%s", want, res.Context)
		}
	}
	// The own page's anchors go; the other page's cross-references are code on the site: they go too.
	if strings.Contains(res.Context, "#widget.convert") {
		t.Errorf("context keeps cross-reference targets:\n%s", res.Context)
	}
	exact := site.tok.Count(res.Context)
	if d := res.ContextTokens - exact; d < -8 || d > 8 || exact > budget {
		t.Errorf("context_tokens %d, counted whole %d (budget %d)", res.ContextTokens, exact, budget)
	}
	// Each chunk is counted once for the retriever: the next question reads its count from the first.
	for id := range 2 {
		text, err := ix.ChunkText(id)
		if err != nil {
			t.Fatal(err)
		}
		want := site.tok.Count(markdown.CompactLinks(text, ix.Pages[ix.Chunks[id].PageID].URL))
		if got := r.contextTokens[id].Load() - 1; int(got) != want {
			t.Errorf("chunk %d: kept count %d, want %d", id, got, want)
		}
	}
	again, err := r.Retrieve(context.Background(), question, a.Rewrites)
	if err != nil {
		t.Fatal(err)
	}
	if again.Context != res.Context || again.ContextTokens != res.ContextTokens {
		t.Errorf("asked again: %d tokens, first %d; same context %v", again.ContextTokens, res.ContextTokens, again.Context == res.Context)
	}
}

// A question in another language counts its own terms in passages: the language's stems and stopwords, the parts
// of its compounds, and a Japanese run's bigrams.
func TestLangPassageCoverage(t *testing.T) {
	vocabulary := map[string]bool{"zeil": true, "nummeri": true, "absatz": true}
	known := func(term string) bool { return vocabulary[term] }
	de, ja := textnorm.LanguageOf("de"), textnorm.LanguageOf("ja")
	for _, c := range []struct {
		name     string
		lang     *textnorm.Language
		question string
		text     string
		want     float64
	}{
		{"inflections meet", de, "Wie formatiere ich Absätze?", "Einen Absatz formatieren Sie im Menü.", 1},
		{"stopwords are not terms", de, "Wie formatiere ich Absätze?", "Wie und ich, aber nicht hier.", 0},
		{"compound question, words passage", de, "Wo schalte ich die Zeilennummerierung ein?",
			"Die Zeilen nummerieren Sie unter Extras.", 0.5}, // schalt, zeilennummerier (ein is a stopword)
		{"words question, compound passage", de, "Wie kann ich Zeilen nummerieren?", "Die Zeilennummerierung steht unter Extras.", 1},
		{"a derivation holds its head", de, "Gibt es ein Protokoll?", "Die Protokollierung der Operationen.", 0.5}, // gibt, protokoll
		{"a short stem heads nothing", de, "Wo ist das Dat?", "Das Datum.", 0},
		{"Japanese bigrams", ja, "設定ファイルを変更する", "設定ファイルはここにあります。", 5.0 / 9}, // 設定 定フ ファ ァイ イル of nine,
	} {
		q := newLangPassageQuery(c.question, c.lang, textnorm.Options{}, known)
		if _, got := q.coverage(c.text); got != c.want {
			t.Errorf("%s: coverage %.3f, want %.3f (terms %v)", c.name, got, c.want, q.terms)
		}
	}
	// Offline answers weigh a unit by the question terms it holds: a Japanese run holds several.
	q := newLangPassageQuery("設定ファイルを変更する", ja, textnorm.Options{}, known)
	if m, ranges := q.matches("設定ファイルは ここ です"); bits.OnesCount64(m) != 5 || len(ranges) != 1 {
		t.Errorf("Japanese unit: %d terms in %d ranges, want 5 in 1", bits.OnesCount64(m), len(ranges))
	}
	// Read as English, as before questions had languages, the German forms do not meet.
	if _, got := newPassageQuery("Wie formatiere ich Absätze?", nil).coverage("Einen Absatz formatieren Sie im Menü."); got == 1 {
		t.Errorf("the English analysis brought Absätze and Absatz together")
	}
}

// A Japanese question read by words (textnorm.Options.WordBigrams) weighs each word once, however many bigrams
// it has: a unit holding "インストール" (five bigrams) and one holding "記録" (one) hold as much of the question.
func TestJapaneseWordWeights(t *testing.T) {
	ja := textnorm.LanguageOf("ja")
	q := newLangPassageQuery("インストールの記録", ja, textnorm.Options{WordBigrams: true}, func(string) bool { return false })
	install, _ := q.matches("インストール")
	record, _ := q.matches("記録")
	if a, b := q.weigh(install), q.weigh(record); a != b || a != 1 {
		t.Errorf("インストール weighs %.2f, 記録 %.2f; want one word each", a, b)
	}
	// Read by bigrams, as search reads them, the long word is five terms to the short one's one.
	plain := newLangPassageQuery("インストールの記録", ja, textnorm.Options{}, func(string) bool { return false })
	if m, _ := plain.matches("インストール"); plain.weigh(m) != 5 {
		t.Errorf("by bigrams インストール weighs %.2f, want 5", plain.weigh(m))
	}
	// Chinese runs are whole clauses: no weights.
	if zh := newLangPassageQuery("如何列出字体", textnorm.LanguageOf("zh"), textnorm.Options{WordBigrams: true}, nil); zh.weights != nil {
		t.Errorf("a Chinese question has weights %v", zh.weights)
	}
}
