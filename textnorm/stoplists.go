package textnorm

import (
	"bufio"
	"bytes"
	"strings"

	"github.com/blevesearch/bleve/v2/analysis/lang/da"
	"github.com/blevesearch/bleve/v2/analysis/lang/de"
	"github.com/blevesearch/bleve/v2/analysis/lang/es"
	"github.com/blevesearch/bleve/v2/analysis/lang/fi"
	"github.com/blevesearch/bleve/v2/analysis/lang/fr"
	"github.com/blevesearch/bleve/v2/analysis/lang/it"
	"github.com/blevesearch/bleve/v2/analysis/lang/nl"
	"github.com/blevesearch/bleve/v2/analysis/lang/no"
	"github.com/blevesearch/bleve/v2/analysis/lang/pt"
	"github.com/blevesearch/bleve/v2/analysis/lang/sv"
)

// The stopword lists of the languages other than English are the Snowball project's (BSD licence; see
// https://snowballstem.org/license.html), as Lucene ships them and Bleve carries them in its analysis/lang
// packages (github.com/blevesearch/bleve, Apache License 2.0).
var (
	stopDE = de.GermanStopWords
	stopNL = nl.DutchStopWords
	stopSV = sv.SwedishStopWords
	stopDA = da.DanishStopWords
	stopNO = no.NorwegianStopWords
	stopFR = fr.FrenchStopWords
	stopES = es.SpanishStopWords
	stopIT = it.ItalianStopWords
	stopPT = pt.PortugueseStopWords
	stopFI = fi.FinnishStopWords
)

// stopList reads a stopword list in the Snowball format: a word at the start of a line, "|" (or "#") starting a
// comment. Words are case folded.
func stopList(b []byte) map[string]struct{} {
	m := make(map[string]struct{})
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexAny(line, "|#"); i >= 0 {
			line = line[:i]
		}
		for _, w := range strings.Fields(line) {
			m[fold(w)] = struct{}{}
		}
	}
	return m
}
