package textnorm

import (
	"sync"

	"github.com/blevesearch/bleve/v2/analysis/lang/pl/stempel"
)

// polishTable is the Stempel stemmer's table for Polish (Andrzej Białecki's pretrained table; Apache License 2.0),
// as Bleve embeds it in its Go port of Stempel (github.com/blevesearch/stempel): the Polish stemmer Lucene ships.
// It is read on first use, when a Polish text is first stemmed: about 55 ms and 6 MB of heap, which a site without
// Polish never spends. A table that cannot be read leaves Polish words unstemmed.
var polishTable = sync.OnceValues(stempel.LoadTrie)

// polishStem is w's Stempel stem ("wierszy" and "wiersze" are "wiersz", "tabeli" "tabela"); w itself when the
// table has no rule for it.
func polishStem(w string) string {
	table, err := polishTable()
	if err != nil {
		return w
	}
	r := []rune(w)
	stem := stempel.Diff(r, table.GetLastOnPath(r))
	if len(stem) == 0 {
		return w
	}
	return string(stem)
}
