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
