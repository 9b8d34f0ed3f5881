package retrieval

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ragproxy/ragproxy/embed"
	"github.com/ragproxy/ragproxy/index"
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
	q := newPassageQuery("When does instruction begin in the fall term?") // instruct, begin, fall, term
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
	}
	for _, tt := range tests {
		if got := q.coverage(tt.text); got != tt.want {
			t.Errorf("%s: coverage = %v, want %v", tt.name, got, tt.want)
		}
	}
	if q := newPassageQuery("what is it?"); q.n != 0 {
		t.Errorf("a question of stopwords has %d terms", q.n)
	}
}

// TestPassageRerankLongPage: on a long page, short chunks that repeat the question's words apart outrank, in the
// fused chunk order, the long chunk whose one sentence answers; within a tight budget only passage selection
// puts the answer in the context.
func TestPassageRerankLongPage(t *testing.T) {
	const question = "how many advanced widget credits do students complete?"
	const fact = "Students complete 42 credits of advanced widget coursework."
	ix := &index.Index{}
	tok, err := tokenizer.New()
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	addPage := func(title string, chunks []string) {
		p := index.Page{ID: len(ix.Pages), URL: fmt.Sprintf("https://s.example/p%d/", len(ix.Pages)), Title: title,
			Summary: title}
		for i, text := range chunks {
			id := len(ix.Chunks)
			ix.Chunks = append(ix.Chunks, index.Chunk{ID: id, PageID: p.ID, Ord: i, Text: text, Tokens: tok.Count(text)})
			p.Chunks = append(p.Chunks, id)
			p.Markdown += text + "\n\n"
			texts = append(texts, index.SearchText(title, "", text))
		}
		ix.Pages = append(ix.Pages, p)
	}
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
	addPage("Widget Program", chunks)
	addPage("Campus Map", []string{"## Map\n\n" + filler(0, 40), "## Parking\n\n" + filler(5, 40)})

	emb, vecs, err := embed.FitEmbed(context.Background(), texts, embed.LocalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	ix.ChunkVectors = vecs
	if ix.SummaryVectors, err = emb.Embed(context.Background(), []string{"Widget Program", "Campus Map"}); err != nil {
		t.Fatal(err)
	}
	ix.Manifest = index.Manifest{Embedder: emb.Name(), Dimension: emb.Dimension(), Pages: len(ix.Pages), Chunks: len(ix.Chunks)}
	// The budget holds the long chunk or the short ones, not both.
	budget := ix.Chunks[6].Tokens + 100
	base, err := New(ix, emb, tok, Config{ContextTokens: budget, NoWordNet: true})
	if err != nil {
		t.Fatal(err)
	}
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
