package textnorm

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis/lang/ar"
	"github.com/blevesearch/bleve/v2/analysis/lang/ca"
	"github.com/blevesearch/bleve/v2/analysis/lang/cs"
	"github.com/blevesearch/bleve/v2/analysis/lang/da"
	"github.com/blevesearch/bleve/v2/analysis/lang/de"
	"github.com/blevesearch/bleve/v2/analysis/lang/el"
	"github.com/blevesearch/bleve/v2/analysis/lang/es"
	"github.com/blevesearch/bleve/v2/analysis/lang/fa"
	"github.com/blevesearch/bleve/v2/analysis/lang/fi"
	"github.com/blevesearch/bleve/v2/analysis/lang/fr"
	"github.com/blevesearch/bleve/v2/analysis/lang/hi"
	"github.com/blevesearch/bleve/v2/analysis/lang/hu"
	"github.com/blevesearch/bleve/v2/analysis/lang/id"
	"github.com/blevesearch/bleve/v2/analysis/lang/it"
	"github.com/blevesearch/bleve/v2/analysis/lang/nl"
	"github.com/blevesearch/bleve/v2/analysis/lang/no"
	"github.com/blevesearch/bleve/v2/analysis/lang/pl"
	"github.com/blevesearch/bleve/v2/analysis/lang/pt"
	"github.com/blevesearch/bleve/v2/analysis/lang/ro"
	"github.com/blevesearch/bleve/v2/analysis/lang/ru"
	"github.com/blevesearch/bleve/v2/analysis/lang/sv"
	"github.com/blevesearch/bleve/v2/analysis/lang/tr"
)

var update = flag.Bool("update", false, "rewrite the stopword lists under stopwords/ from Bleve's")

// TestStopListsAreBleves checks that each embedded stopword list is, byte for byte, the Snowball list Bleve
// carries; -update writes them.
func TestStopListsAreBleves(t *testing.T) {
	for code, want := range map[string][]byte{"de": de.GermanStopWords, "nl": nl.DutchStopWords, "sv": sv.SwedishStopWords,
		"da": da.DanishStopWords, "no": no.NorwegianStopWords, "fr": fr.FrenchStopWords, "es": es.SpanishStopWords,
		"it": it.ItalianStopWords, "pt": pt.PortugueseStopWords, "fi": fi.FinnishStopWords,
		"ru": ru.RussianStopWords, "ro": ro.RomanianStopWords, "hu": hu.HungarianStopWords, "tr": tr.TurkishStopWords,
		"ar": ar.ArabicStopWords, "fa": fa.PersianStopWords, "ca": ca.CatalanStopWords, "cs": cs.CzechStopWords, "el": el.GreekStopWords,
		"id": id.IndonesianStopWords, "pl": pl.PolishStopWords, "hi": hi.HindiStopWords} {
		file := filepath.Join("stopwords", code+".txt")
		if *update {
			if err := os.WriteFile(file, want, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from Bleve's %s list (go test ./textnorm -run StopLists -update)", file, code)
		}
	}
}
