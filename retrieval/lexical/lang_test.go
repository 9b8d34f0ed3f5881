package lexical

import (
	"math"
	"slices"
	"testing"

	"github.com/ragproxy/ragproxy/textnorm"
)

// germanDocs are pages of a German word processor's help: the line numbering page writes the compound, the
// paragraph page the singular, and the others use the words that make them up elsewhere.
var germanDocs = []string{
	"Zeilennummerierung: Die Zeilennummerierung zeigt am linken Rand neben jeder Zeile eine Nummer an.",
	"Einen Absatz formatieren: Einzüge und Abstände vor und nach dem Absatz festlegen.",
	"Seiten nummerieren: Fügen Sie Seitenzahlen in die Kopfzeile oder Fußzeile ein.",
	"Tabellen: Zeilen und Spalten einfügen, löschen und die Breite der Spalten ändern.",
	"Drucken: Wählen Sie den Drucker und die Anzahl der Kopien.",
}

var germanDocsOtherForms = []string{
	"Zeilen nummerieren: Am linken Rand steht neben jeder Zeile eine Nummer, wenn Sie die Zeilen nummerieren.",
	"Absätze formatieren: Einzüge und Abstände vor und nach den Absätzen festlegen.",
	"Seitennummerierung: Fügen Sie die Seitennummerierung in die Kopfzeile oder Fußzeile ein.",
	"Tabellen: Zeilen und Spalten einfügen, löschen und die Breite der Spalten ändern.",
	"Drucken: Wählen Sie den Drucker und die Anzahl der Kopien.",
}

func allLang(tag string) func(int) string { return func(int) string { return tag } }

func TestGermanInflectionsAndCompoundsMeet(t *testing.T) {
	compound := NewBM25(germanDocs, Config{Lang: allLang("de")})
	parts := NewBM25(germanDocsOtherForms, Config{Lang: allLang("de")})
	cases := []struct {
		name  string
		bm    *BM25
		query string
		want  int
	}{
		{"plural question, singular page", compound, "Wie formatiere ich Absätze?", 1},
		{"singular question, plural page", parts, "Wie formatiere ich einen Absatz?", 1},
		{"words question, compound page", compound, "Wie kann ich Zeilen nummerieren?", 0},
		{"compound question, words page", parts, "Wo schalte ich die Zeilennummerierung ein?", 0},
	}
	for _, c := range cases {
		hits := c.bm.SearchLang("de", c.query, 3, nil)
		if len(hits) == 0 || hits[0].Doc != c.want {
			t.Errorf("%s: %q found %v, want document %d first", c.name, c.query, hits, c.want)
		}
	}
	// Without the German analysis (the English one, as before pages had languages), the forms do not meet.
	english := NewBM25(germanDocs, Config{})
	if hits := english.Search("Wie formatiere ich Absätze?", 3, nil); len(hits) > 0 && hits[0].Doc == 1 {
		t.Errorf("the English analysis matched Absätze with Absatz: %v", hits)
	}
	// Without compound splitting, the compound page is not found by its parts.
	whole := NewBM25(germanDocs, Config{Lang: allLang("de"), Analyzer: Analyzer{NoCompounds: true}})
	if hits := whole.SearchLang("de", "Wie kann ich Zeilen nummerieren?", 3, nil); len(hits) > 0 && hits[0].Doc == 0 {
		t.Errorf("without compounds the words found the compound page first: %v", hits)
	}
}

func TestJapaneseQuestionFindsItsPage(t *testing.T) {
	docs := []string{
		"メールサーバーの設定: Postfix をインストールし、main.cf でドメインを設定します。",
		"ネットワークの設定: systemd-networkd で固定 IP アドレスを設定します。",
		"パッケージ管理: apt でパッケージをインストールし、更新します。",
		"バックアップ: rsync でファイルを別のディスクにコピーします。",
	}
	bm := NewBM25(docs, Config{Lang: allLang("ja")})
	for q, want := range map[string]int{
		"メールサーバーはどうやって設定しますか？": 0,
		"固定IPアドレスを使いたい":        1,
		"ファイルのバックアップ方法":        3,
	} {
		hits := bm.SearchLang("ja", q, 3, nil)
		if len(hits) == 0 || hits[0].Doc != want {
			t.Errorf("%q found %v, want document %d first", q, hits, want)
		}
	}
	// As one English word per run, a question shares no term with the pages.
	if hits := NewBM25(docs, Config{}).Search("メールサーバーはどうやって設定しますか？", 3, nil); len(hits) > 0 {
		t.Errorf("whole runs matched: %v", hits)
	}
}

func TestEnglishDocumentsIgnoreLanguages(t *testing.T) {
	docs := []string{"Dropping a class after the deadline", "Adding classes: the add deadline", "Parking permits"}
	plain := NewBM25(docs, Config{})
	tagged := NewBM25(docs, Config{Lang: allLang("en-US")})
	for _, q := range []string{"drop a class", "deadlines for adding", "parking"} {
		a, b := plain.Search(q, 3, nil), tagged.SearchLang("en", q, 3, nil)
		if len(a) == 0 || len(a) != len(b) {
			t.Fatalf("%q: %v and %v", q, a, b)
		}
		for i := range a {
			if a[i] != b[i] {
				t.Errorf("%q: untagged %v, tagged English %v", q, a, b)
			}
		}
	}
}

// On an index of two languages, a query weighs its terms by their idf among the documents of its own language:
// the English documents score as they do in an index of the English documents alone, however many German
// documents repeat the commands and names they share.
func TestSearchLangWeighsTermsInItsLanguage(t *testing.T) {
	english := []string{
		"Run apt-get update before apt-get install to refresh the package lists.",
		"The sources.list file names the mirrors apt downloads packages from.",
		"Use dpkg to install a package file you downloaded yourself.",
		"Reboot the machine after a kernel upgrade.",
	}
	german := []string{
		"Führen Sie apt-get update vor apt-get install aus, um die Paketlisten zu erneuern.",
		"Die Datei sources.list nennt die Spiegel, von denen apt Pakete lädt.",
		"Mit dpkg installieren Sie eine heruntergeladene Paketdatei.",
		"Mit apt und dpkg verwalten Sie Pakete; apt-get ist das ältere Werkzeug.",
	}
	langs := func(doc int) string {
		if doc < len(english) {
			return "en"
		}
		return "de"
	}
	alone := NewBM25(english, Config{})
	both := NewBM25(append(slices.Clone(english), german...), Config{Lang: langs})
	both.SetLanguages(langs)
	for _, q := range []string{"how do i install a package with apt-get", "where does apt find its mirrors", "dpkg install file"} {
		want := alone.SearchLang("en", q, 10, nil)
		got := both.SearchLang("en", q, 10, func(doc int) bool { return doc < len(english) })
		if len(got) != len(want) {
			t.Fatalf("%q: %v on both languages, %v on English alone", q, got, want)
		}
		for i := range want {
			if got[i].Doc != want[i].Doc || math.Abs(got[i].Score-want[i].Score) > 1e-4*want[i].Score {
				t.Errorf("%q: hit %d is %v on both languages, %v on English alone", q, i, got[i], want[i])
			}
		}
		in := both.SearchInLang("en", q, 10, []int{0, 1, 2, 3})
		for i := range in {
			if in[i] != got[i] {
				t.Errorf("%q: SearchInLang hit %d is %v, SearchLang's %v", q, i, in[i], got[i])
			}
		}
	}
	// Without the languages, the German documents' repeats lower the shared terms' weight.
	plain := NewBM25(append(slices.Clone(english), german...), Config{Lang: langs})
	q := "how do i install a package with apt-get"
	if a, b := plain.SearchLang("en", q, 1, nil), alone.SearchLang("en", q, 1, nil); math.Abs(a[0].Score-b[0].Score) < 1e-3 {
		t.Errorf("the shared terms weigh the same without the languages (%v and %v): the test shows nothing", a, b)
	}
}

// A question's compound weighs as one word: its parts, found in the index, share the word's weight.
func TestCompoundPartsShareTheirWordsWeight(t *testing.T) {
	b := NewBM25(germanDocsOtherForms, Config{Lang: allLang("de")})
	terms, qtf := b.queryTerms("de", "Zeilennummerierung für Spalten?")
	weights := map[string]float32{}
	for i, term := range terms {
		weights[b.termText[b.termOffs[term]:b.termOffs[term+1]]] = qtf[i]
	}
	parts := weights["zeil"] + weights["nummeri"]
	if weights["zeil"] == 0 || weights["nummeri"] == 0 || math.Abs(float64(parts)-1) > 1e-6 {
		t.Errorf("weights %v: the compound's parts zeil and nummeri should share one word's weight", weights)
	}
	if weights["spalt"] != 1 {
		t.Errorf("weights %v: a word weighs 1", weights)
	}
}

// A question whose stopwords are Italian's and Spanish's alike fits the Italian documents better when they write
// its other words: the Italian pages say "directory" and "serve", the Spanish ones "directorio" and "sirve".
func TestLanguageFit(t *testing.T) {
	docs := []string{
		"La directory /srv contiene i dati dei servizi offerti dal sistema.",
		"A cosa serve la directory /etc? Contiene i file di configurazione.",
		"Ogni directory ha un proprietario e dei permessi.",
		"El directorio /srv contiene los datos de los servicios del sistema.",
		"¿Para qué sirve el directorio /etc? Contiene los archivos de configuración.",
		"Cada directorio tiene un propietario y permisos.",
		"The /srv directory holds data for services this system provides.",
	}
	langs := func(doc int) string { return [...]string{"it", "it", "it", "es", "es", "es", "en"}[doc] }
	b := NewBM25(docs, Config{Lang: langs})
	if _, ok := b.LanguageFit("it", "a cosa serve la directory /srv?"); ok {
		t.Error("a fit before the index knows its documents' languages")
	}
	b.SetLanguages(langs)
	fit := func(lang, q string) float64 {
		f, ok := b.LanguageFit(lang, q)
		if !ok {
			t.Fatalf("no fit for %s", lang)
		}
		return f
	}
	for _, tc := range []struct{ q, better, worse string }{
		{"a cosa serve la directory /srv?", "it", "es"},
		{"¿para qué sirve el directorio /srv?", "es", "it"},
		{"what is the srv directory for", "en", "es"},
	} {
		if b, w := fit(tc.better, tc.q), fit(tc.worse, tc.q); b <= w {
			t.Errorf("%q: fit %s %.2f, %s %.2f; want %s ahead", tc.q, tc.better, b, tc.worse, w, tc.better)
		}
	}
	if _, ok := b.LanguageFit("fr", "à quoi sert le répertoire /srv ?"); ok {
		t.Error("a fit for a language no document is in")
	}
}

// TestUnlistedLanguageLengths checks that the documents of a language with no analysis of its own here (Slovak)
// share one average length, as a listed language's do: a short passage holding a term outranks a long one holding
// it once.
func TestUnlistedLanguageLengths(t *testing.T) {
	if l := textnorm.LanguageOf("sk"); l.Stemmed() || l.IsStopword("a") {
		t.Fatal("Slovak has an analysis of its own now: choose another language for this test")
	}
	docs := []string{
		"Nainštalujte balík príkazom apt.",
		"Nainštalujte balík príkazom apt, potom skontrolujte konfiguráciu, reštartujte službu, pozrite si systémový denník a zálohujte údaje pred aktualizáciou servera.",
		"Install the package with apt.",
	}
	idx := NewBM25(docs, Config{Lang: func(d int) string { return []string{"sk", "sk", "en"}[d] }})
	hits := idx.SearchLang("sk", "nainštalujte balík", 3, nil)
	if len(hits) < 2 || hits[0].Doc != 0 || hits[0].Score <= hits[1].Score {
		t.Errorf("hits %+v: want the short Slovak passage first, scoring above the long one", hits)
	}
}
