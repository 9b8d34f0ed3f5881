package textnorm

import (
	"bufio"
	"bytes"
	"embed"
	"strings"
)

// The stopword lists of the languages other than English are the Snowball project's (BSD licence, in
// stopwords/LICENSE-Snowball; see https://snowballstem.org/license.html), except Romanian's, Arabic's, Persian's
// and Hindi's, Jacques Savoy's (BSD licence, as their headers say), Polish's, the stopwords-iso
// project's (MIT licence, as its header says), Turkish's, Czech's and Greek's, Lucene's (Apache License 2.0),
// Indonesian's, from appendix D of F. Z. Tala's "A Study of Stemming Effects on Information Retrieval in Bahasa
// Indonesia" as Lucene ships it (Apache License 2.0), and Catalan's, from the cue.language project (Apache License
// 2.0, as its header says); all byte for byte
// as Lucene ships them and Bleve carries them in its analysis/lang packages (github.com/blevesearch/bleve, Apache
// License 2.0).
// TestStopListsAreBleves checks the files against Bleve's and rewrites them with -update. They are files here,
// not imports of Bleve's packages, because those packages register analyzers with Bleve's whole search engine,
// which would more than double the size of the binary.
//
//go:embed stopwords/*.txt
var stopFiles embed.FS

var (
	stopDE = stopFile("de")
	stopNL = stopFile("nl")
	stopSV = stopFile("sv")
	stopDA = stopFile("da")
	stopNO = stopFile("no")
	stopFR = stopFile("fr")
	stopES = stopFile("es")
	stopIT = stopFile("it")
	stopPT = stopFile("pt")
	stopFI = stopFile("fi")
	stopRU = stopFile("ru")
	stopRO = stopFile("ro")
	stopHU = stopFile("hu")
	stopTR = stopFile("tr")
	stopAR = stopFile("ar")
	stopFA = stopFile("fa")
	stopCA = stopFile("ca")
	stopCS = stopFile("cs")
	stopEL = stopFile("el")
	stopID = stopFile("id")
	stopPL = stopFile("pl")
	stopHI = stopFile("hi")
)

// stopFile is the embedded stopword list of the language code.
func stopFile(code string) []byte {
	b, err := stopFiles.ReadFile("stopwords/" + code + ".txt")
	if err != nil {
		panic("textnorm: the embedded stopword list " + code + " is missing") // a build without the files
	}
	return b
}

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
