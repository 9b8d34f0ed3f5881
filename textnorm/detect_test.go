package textnorm

import "testing"

// Among many languages a short text is told by its script or its stopwords, a longer one by trigrams that clearly
// lead; a few accented words are no language.
func TestDetectAmongMany(t *testing.T) {
	many := Analysed()
	for text, want := range map[string]string{
		"Wann beginnen die Vorlesungen im Wintersemester?\nAm 14. Oktober.":    "de",
		"Where is the library and when does it open?\nIn building 4.":          "en",
		"授業はいつ始まりますか？\n9月2日です。":                                                "ja",
		"Quand commencent les cours du semestre d'automne ?\nLe 16 septembre.": "fr",
		"Parkplätze?\nParkplatz B.":                                            "",
		// Five of Polish's stopwords ("a", "i", "o", "w", "do") to English's four: trigrams choose between them.
		"how do i lock a users account temporarily w/o deleting anything\npasswd -l user": "en",
	} {
		got, ok := DetectAmongMany(text, many)
		if want == "" && ok || want != "" && got != want {
			t.Errorf("DetectAmongMany(%q) = %q %v, want %q", text, got, ok, want)
		}
	}
}

// A page's prose made of one language's function words is that language without trigrams; a text whose
// function words do not overwhelmingly name one language, or whose letters are mostly of another script, is left
// to them.
func TestDetectProse(t *testing.T) {
	for _, c := range []struct {
		text  string
		words string // the language proseStopwords names, "" for none (trigrams decide, as Detect's)
	}{
		{"The configuration file is read when the server starts, and it is read again when the server receives a signal to reload it. If the file has an error in it, the server keeps the settings it had before and writes the error to its log.", "en"},
		// Dutch, whose trigrams are close to Afrikaans's: its stopwords decide.
		{"Hiermee kunt u de inhoud van het document bijwerken. Klik op de knop en kies dan het item dat u wilt wijzigen, of selecteer een woord in de tekst en voeg het toe aan de lijst die u hebt gemaakt.", "nl"},
		// German leads Dutch ("die", "der", "er", "in") by less than threefold here, Spanish Portuguese and
		// Catalan: trigrams decide.
		{"Die Datei wird gelesen, wenn der Dienst startet, und sie wird noch einmal gelesen, wenn er das Signal zum Neuladen bekommt. Wenn in der Datei ein Fehler ist, behält der Dienst die Einstellungen, die er vorher hatte.", ""},
		{"El archivo de configuración se lee cuando el servicio se inicia, y se vuelve a leer cuando recibe la señal para recargarlo. Si el archivo tiene un error, el servicio mantiene la configuración que tenía antes.", ""},
		// Slovak, which has no stopword list here, is not read as Czech by the Czech list.
		{"Ak chcete vložiť obrázok do dokumentu, kliknite na ponuku Vložiť a potom vyberte položku Obrázok. Obrázok sa zobrazí na mieste kurzora a jeho veľkosť môžete zmeniť ťahaním za rohy.", ""},
		// A Khmer page whose steps were left in English: most of its letters are Khmer.
		{"ការរុំអត្ថបទជុំវិញវត្ថុ ដើម្បីរុំអត្ថបទជុំវិញវត្ថុ ជ្រើសវត្ថុ ។ Choose the object, then open the menu and choose the wrap that you want for it. The text flows around the object as it is set in the dialog.", ""},
	} {
		got, ok := proseStopwords(c.text)
		if got != c.words || ok != (c.words != "") {
			t.Errorf("proseStopwords(%.40q) = %q %v, want %q", c.text, got, ok, c.words)
		}
		want, wantOK := c.words, true
		if want == "" {
			want, wantOK = Detect(c.text, nil)
		}
		if got, ok := DetectProse(c.text); got != want || ok != wantOK {
			t.Errorf("DetectProse(%.40q) = %q %v, want %q %v", c.text, got, ok, want, wantOK)
		}
	}
}

// Catalan, for which the detector has no trigrams, is a question's language when its stopwords alone lead, whichever
// language is the site's first: trigrams would choose Portuguese, whose "com", "de" and "a" it shares.
func TestDetectCatalanAmongPortuguese(t *testing.T) {
	for _, among := range [][]string{{"pt", "ca", "en"}, {"ca", "pt", "en"}, {"en", "pt", "ca"}} {
		for _, q := range []string{"com trec un salt de pàgina manual?", "com passo el text seleccionat a majúscules?"} {
			if got, ok := DetectQuestion(q, among); !ok || got != "ca" {
				t.Errorf("DetectQuestion(%q, %q) = %q, %v; want ca", q, among, got, ok)
			}
		}
		if got, ok := DetectQuestion("como eu tiro uma quebra de página manual?", among); !ok || got != "pt" {
			t.Errorf("a Portuguese question among %q: %q, %v", among, got, ok)
		}
	}
}
