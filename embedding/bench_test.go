package embedding

import (
	"context"
	"testing"

	"github.com/ragproxy/ragproxy/internal/corpustest"
)

// corpusTexts returns the chunks of the Berkeley corpus plus one summary-sized text per page (title and lead),
// the batch an ingest embeds.
func corpusTexts(b *testing.B) []string {
	pages := corpustest.Pages(b)
	var texts []string
	for _, p := range pages {
		lead := p.Text
		if len(lead) > 400 {
			lead = lead[:400]
		}
		texts = append(texts, p.Title+". "+lead)
	}
	for _, c := range corpustest.Chunks(pages, corpusChunkChars) {
		texts = append(texts, c.Text)
	}
	return texts
}

// BenchmarkLocalEmbedCorpus embeds every chunk and summary of the Berkeley corpus in one batch.
func BenchmarkLocalEmbedCorpus(b *testing.B) {
	texts := corpusTexts(b)
	l := FitLocal(texts, LocalConfig{})
	var bytes int64
	for _, t := range texts {
		bytes += int64(len(t))
	}
	b.SetBytes(bytes)
	b.ReportAllocs()
	b.ResetTimer()
	start := corpustest.CPUTime()
	for b.Loop() {
		if _, err := l.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
	}
	corpustest.ReportCPU(b, start)
	b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "texts/s")
}

// BenchmarkFitLocal learns the IDF table from the same batch.
func BenchmarkFitLocal(b *testing.B) {
	texts := corpusTexts(b)
	b.ReportAllocs()
	b.ResetTimer()
	start := corpustest.CPUTime()
	for b.Loop() {
		FitLocal(texts, LocalConfig{})
	}
	corpustest.ReportCPU(b, start)
	b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "texts/s")
}

// BenchmarkLocalEmbedQuery embeds one student-style question, as retrieval does per rewrite.
func BenchmarkLocalEmbedQuery(b *testing.B) {
	l := FitLocal(fitTexts, LocalConfig{})
	ctx := context.Background()
	q := []string{"hw many upper div units for bioengineering bs"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Embed(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFitEmbedCorpus fits the IDF and embeds the same batch in one pass, as ingest does.
func BenchmarkFitEmbedCorpus(b *testing.B) {
	texts := corpusTexts(b)
	b.ReportAllocs()
	b.ResetTimer()
	start := corpustest.CPUTime()
	for b.Loop() {
		if _, _, err := FitEmbed(context.Background(), texts, LocalConfig{}); err != nil {
			b.Fatal(err)
		}
	}
	corpustest.ReportCPU(b, start)
	b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "texts/s")
}
