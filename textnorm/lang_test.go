package textnorm

import (
	"slices"
	"testing"
)

func TestBaseAndEnglish(t *testing.T) {
	for tag, want := range map[string]string{"de-CH": "de", "DE_de": "de", "en": "en", "": "", "x": "", "zh-Hant": "zh", "1a": ""} {
		if got := Base(tag); got != want {
			t.Errorf("Base(%q) = %q, want %q", tag, got, want)
		}
	}
	for _, tag := range []string{"", "en", "en-US", "EN-gb"} {
		if !IsEnglish(tag) || LanguageOf(tag) != nil {
			t.Errorf("%q is not English", tag)
		}
	}
	if IsEnglish("de") || LanguageOf("de-AT").Tag() != "de" || LanguageOf("nb").Tag() != "no" {
		t.Error("German or Norwegian tags misread")
	}
	if l := LanguageOf("sw"); l == nil || l.Stemmed() {
		t.Error("a language without a stemmer should get an unstemmed analysis")
	}
}

func TestLanguageStemsAndStopwords(t *testing.T) {
	de, fr := LanguageOf("de"), LanguageOf("fr")
	pairs := []struct {
		l    *Language
		a, b string
	}{{de, "Absätze", "Absatz"}, {de, "Zeilen", "Zeile"}, {de, "Größe", "grösse"}, {fr, "paquets", "paquet"}, {fr, "installés", "installé"},
		// A verb in -ieren and its nouns and participles.
		{de, "nummerieren", "Nummerierung"}, {de, "addiere", "addierenden"}, {de, "formatiert", "Formatierung"}, {de, "nummerierte", "nummerieren"},
		// A weak participle and its verb, with a separable prefix too; a noun in -keit and its plural.
		{de, "gespeichert", "speichern"}, {de, "ausgewählt", "auswählen"}, {de, "angemeldet", "anmelden"}, {de, "geänderte", "ändern"},
		{de, "Geschwindigkeit", "Geschwindigkeiten"},
		// A French verb and its noun in -ification or -age.
		{fr, "modifier", "modification"}, {fr, "vérifié", "vérification"}, {fr, "afficher", "affichage"},
		{fr, "démarrer", "démarrage"}}
	for _, p := range pairs {
		if p.l.Stem(p.a) != p.l.Stem(p.b) {
			t.Errorf("%s: %q stems to %q, %q to %q", p.l.Tag(), p.a, p.l.Stem(p.a), p.b, p.l.Stem(p.b))
		}
	}
	if de.Stem("vier") != "vier" || de.Stem("Papier") != de.Stem("Papiere") {
		t.Errorf("short stems in -ier changed: vier %q, Papier %q, Papiere %q", de.Stem("vier"), de.Stem("Papier"), de.Stem("Papiere"))
	}
	for _, w := range []string{"und", "Wie", "ich"} {
		if !de.IsStopword(w) {
			t.Errorf("%q is a German stopword", w)
		}
	}
	if de.IsStopword("Zeile") || fr.IsStopword("paquet") || !fr.IsStopword("les") {
		t.Error("French or German stopwords wrong")
	}
}

// Persian is read as Lucene reads it: Arabic's and Persian's letter variants as one, without short vowels, a
// zero-width non-joiner between a word and its prefix or suffix splitting them ("می‌خواهم", "فایل‌های"), which its
// stopword list then holds.
func TestPersian(t *testing.T) {
	fa := LanguageOf("fa")
	for _, p := range [][2]string{{"کلید", "كليد"}, {"پیکربندی", "پيكربندي"}, {"خانهٔ", "خانه"}, {"مدرسة", "مدرسه"}} {
		if fa.Stem(p[0]) != fa.Stem(p[1]) {
			t.Errorf("%q reads %q, %q %q", p[0], fa.Stem(p[0]), p[1], fa.Stem(p[1]))
		}
	}
	var words, kept []string
	Words("من می‌خواهم فایل‌های پیکربندی را ببینم", func(w string) bool {
		words = append(words, w)
		if !fa.IsStopword(w) {
			kept = append(kept, fa.Stem(w))
		}
		return true
	})
	if want := []string{"خواهم", "فايل", "پيكربندي", "ببينم"}; !slices.Equal(kept, want) {
		t.Errorf("words %q keep %q, want %q", words, kept, want)
	}
	among := []string{"en", "ar", "fa"}
	for q, want := range map[string]string{
		"فایل پیکربندی سرور ssh کجا قرار دارد و چطور می‌توانم آن را تغییر بدهم؟": "fa",
		"أين يوجد ملف إعدادات خادم ssh وكيف يمكنني تعديله؟":                      "ar",
	} {
		if got, ok := DetectQuestion(q, among); !ok || got != want {
			t.Errorf("DetectQuestion(%q) = %q, %v; want %q", q, got, ok, want)
		}
	}
	if Name("fa") != "Persian" {
		t.Errorf("Name(fa) = %q", Name("fa"))
	}
}

// Polish has Stempel's stemmer (Lucene's for Polish), whose table is read on first use: a noun's cases and a verb's
// noun meet.
func TestPolish(t *testing.T) {
	pl := LanguageOf("pl")
	if !pl.Stemmed() {
		t.Fatal("Polish has no stemmer")
	}
	for _, p := range [][2]string{{"wierszy", "wiersze"}, {"tabeli", "tabela"}, {"dokumencie", "dokument"}, {"numerowanie", "numerować"}} {
		if pl.Stem(p[0]) != pl.Stem(p[1]) {
			t.Errorf("%q stems to %q, %q to %q", p[0], pl.Stem(p[0]), p[1], pl.Stem(p[1]))
		}
	}
	if !pl.IsStopword("jak") || pl.IsStopword("tabela") {
		t.Error("Polish stopwords wrong")
	}
	if got, ok := DetectQuestion("jak ponumerować wiersze w moim dokumencie?", []string{"en", "pl", "cs"}); !ok || got != "pl" {
		t.Errorf("a Polish question read as %q, %v", got, ok)
	}
}

// Scripts whose vowel signs are spacing marks (Devanagari, Khmer) keep them in their words, and Thai, Lao, Khmer
// and Myanmar, written without spaces between words, are read as overlapping bigrams of their clusters: a
// question typed without the zero-width spaces a page puts between its Khmer words shares the page's bigrams.
func TestSpacelessScripts(t *testing.T) {
	var words []string
	Words("हिन्दी भाषा បន្ថែម", func(w string) bool { words = append(words, w); return true })
	if want := []string{"हिन्दी", "भाषा", "បន្ថែម"}; !slices.Equal(words, want) {
		t.Errorf("words %q, want %q", words, want)
	}
	terms := func(lang, text string) map[string]bool {
		l := LanguageOf(lang)
		out := map[string]bool{}
		Words(text, func(w string) bool {
			l.WordTerms(w, Options{}, func(term string) { out[term] = true })
			return true
		})
		return out
	}
	page := terms("km", "ដើម្បី\u200bបន្ថែម\u200bលេខ\u200bបន្ទាត់ ជ្រើស ឧបករណ៍ - លេខរៀង\u200bបន្ទាត់")
	question := terms("km", "តើខ្ញុំបន្ថែមលេខបន្ទាត់យ៉ាងដូចម្តេច")
	for _, want := range []string{"បន្ថែ", "ន្ថែម", "លេខ", "បន្ទា", "ន្ទាត់"} {
		if !page[want] || !question[want] {
			t.Errorf("bigram %q: on the page %v, in the question %v", want, page[want], question[want])
		}
	}
	th := terms("th", "วิธีใส่เลขบรรทัด")
	if !th["บร"] || !th["ทัด"] || th["วิธีใส่เลขบรรทัด"] {
		t.Errorf("Thai terms %v: want its bigrams, not the run whole", th)
	}
}

// Russian, Romanian, Hungarian and Turkish have Snowball's stemmers and stopword lists too; Russian "ё" is the "е"
// most text writes in its place.
func TestMoreLanguagesStemmed(t *testing.T) {
	for _, c := range []struct{ tag, a, b, stop string }{
		{"ru", "пакеты", "пакетов", "как"}, {"ru", "настройка", "настройки", "где"}, {"ru", "всё", "все", "и"},
		{"ro", "pachetele", "pachetul", "care"}, {"hu", "csomagok", "csomagot", "hogy"}, {"tr", "paketler", "paketleri", "için"},
		// Arabic: the article and a pronoun suffix come off, hamza forms of alef read as one ("الإعدادات").
		{"ar", "المكتبة", "مكتبة", "في"}, {"ar", "الكتاب", "كتابه", "من"}, {"ar", "الإعداد", "إعداد", "على"},
	} {
		l := LanguageOf(c.tag)
		if !l.Stemmed() {
			t.Errorf("%s has no stemmer", c.tag)
			continue
		}
		if l.Stem(c.a) != l.Stem(c.b) {
			t.Errorf("%s: %q stems to %q, %q to %q", c.tag, c.a, l.Stem(c.a), c.b, l.Stem(c.b))
		}
		if !l.IsStopword(c.stop) || l.IsStopword(c.a) {
			t.Errorf("%s: stopword %q: %v, %q: %v", c.tag, c.stop, l.IsStopword(c.stop), c.a, l.IsStopword(c.a))
		}
	}
}

func TestCJKBigrams(t *testing.T) {
	ja := LanguageOf("ja")
	var got []string
	Words(ja.Normalize("設定ﾌｧｲﾙ"), func(w string) bool {
		ja.WordTerms(w, Options{}, func(term string) { got = append(got, term) })
		return true
	})
	// Half-width katakana become full width before the bigrams.
	if want := []string{"設定", "定フ", "ファ", "ァイ", "イル"}; !slices.Equal(got, want) {
		t.Errorf("bigrams %q, want %q", got, want)
	}
	got = got[:0]
	ja.WordTerms("東", Options{}, func(term string) { got = append(got, term) })
	if !slices.Equal(got, []string{"東"}) {
		t.Errorf("one character: %q", got)
	}
	// Two hiragana side by side are grammar, not a term; a hiragana beside a kanji or katakana stays in its bigram.
	for text, want := range map[string][]string{
		"設定を変更しますか": {"設定", "定を", "を変", "変更", "更し"},
		"を":         nil,
		"ファイルには":    {"ファ", "ァイ", "イル", "ルに"},
	} {
		got = got[:0]
		ja.WordTerms(text, Options{}, func(term string) { got = append(got, term) })
		if !slices.Equal(got, want) {
			t.Errorf("%s: bigrams %q, want %q", text, got, want)
		}
	}
	// With WordBigrams the joins of two words go too: katakana before hiragana, hiragana before anything else; a
	// kanji before hiragana stays (an ending, or a particle: "定を", "業は").
	for text, want := range map[string][]string{
		"設定を変更しますか":       {"設定", "定を", "変更", "更し"},
		"インストールされているフォント": {"イン", "ンス", "スト", "トー", "ール", "フォ", "ォン", "ント"},
		"授業は始まります":        {"授業", "業は", "始ま"},
	} {
		got = got[:0]
		ja.WordTerms(text, Options{WordBigrams: true}, func(term string) { got = append(got, term) })
		if !slices.Equal(got, want) {
			t.Errorf("%s: word bigrams %q, want %q", text, got, want)
		}
	}
	for s, want := range map[string]string{"設定ファイル": "ja", "设置邮件服务器": "zh", "단락의 줄": "ko", "Zeile": ""} {
		if got := ScriptLanguage(s); got != want {
			t.Errorf("ScriptLanguage(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestDecompound(t *testing.T) {
	de := LanguageOf("de")
	vocab := map[string]bool{}
	for _, w := range []string{"Zeile", "nummerieren", "Seite", "Kopf", "Verzeichnis", "Inhalt"} {
		vocab[de.Stem(w)] = true
	}
	known := func(term string) bool { return vocab[term] }
	for word, want := range map[string][]string{
		"Zeilennummerierung": {"zeil", "nummeri"},
		"Inhaltsverzeichnis": {"inhalt", "verzeichnis"},
		"Seitennummerierung": {"seit", "nummeri"},
		"Kopfzeilen":         {"kopf", "zeil"},
		"Dokumentation":      nil, // no known head
		"Zeilen":             nil, // too short
	} {
		if got := de.Decompound(word, Options{}, known); !slices.Equal(got, want) {
			t.Errorf("Decompound(%q) = %q, want %q", word, got, want)
		}
	}
	if got := de.Decompound("Zeilennummerierung", Options{NoCompounds: true}, known); got != nil {
		t.Errorf("NoCompounds split: %q", got)
	}
	if got := LanguageOf("fr").Decompound("configuration", Options{}, func(string) bool { return true }); got != nil {
		t.Errorf("French has no compounds: %q", got)
	}
}

// TestName checks the English names the grounding prompt uses for the languages ragproxy analyses.
func TestName(t *testing.T) {
	for tag, want := range map[string]string{"de-CH": "German", "fr": "French", "es": "Spanish", "it": "Italian",
		"pt-BR": "Portuguese", "nl": "Dutch", "sv": "Swedish", "da": "Danish", "no": "Norwegian", "fi": "Finnish",
		"ja": "Japanese", "zh-Hant": "Chinese", "ko": "Korean", "xx": "", "": ""} {
		if got := Name(tag); got != want {
			t.Errorf("Name(%q) = %q, want %q", tag, got, want)
		}
	}
}

// An elided article or pronoun is a word of its own: "d'attente" is "attente" after the stopword "d".
func TestElision(t *testing.T) {
	for _, c := range []struct{ lang, in, want string }{
		{"fr", "la file d'attente de l’utilisateur", "la file d attente de l utilisateur"},
		{"fr", "Qu'APT télécharge aujourd'hui", "Qu APT télécharge aujourd'hui"}, // "aujourd" is not elided
		{"fr", "rock'n'roll", "rock'n'roll"},
		{"it", "dell'archivio e l'utente", "dell archivio e l utente"},
		{"ca", "la contrasenya de l'usuari d'Apache", "la contrasenya de l usuari d Apache"},
		{"de", "geht's", "geht's"},
		{"en", "", ""},
	} {
		l := LanguageOf(c.lang)
		if l == nil {
			continue
		}
		if got := l.Normalize(c.in); got != c.want {
			t.Errorf("%s Normalize(%q) = %q, want %q", c.lang, c.in, got, c.want)
		}
	}
	fr := LanguageOf("fr")
	var got []string
	Words(fr.Normalize("la file d'attente"), func(w string) bool {
		fr.WordTerms(w, Options{}, func(term string) { got = append(got, term) })
		return true
	})
	if want := []string{"fil", "attent"}; !slices.Equal(got, want) {
		t.Errorf("terms %q, want %q", got, want)
	}
}

func TestKatakanaStem(t *testing.T) {
	for in, want := range map[string]string{
		"サーバー": "サーバ", "サーバーの設定": "サーバの設定", "ユーザーとサーバー": "ユーザとサーバ",
		"キー": "キー", "データ": "データ", "設定": "設定", "メモリー管理": "メモリ管理",
	} {
		if got := katakanaStem(in); got != want {
			t.Errorf("katakanaStem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestDetectPassage(t *testing.T) {
	among := []string{"de", "en", "fr", "ja"}
	for text, want := range map[string]string{
		"Le fichier de configuration se trouve dans le répertoire et il est lu au démarrage par le démon.": "fr",
		"Die Datei liegt in dem Verzeichnis und wird beim Start von dem Dienst gelesen, wenn er läuft.":    "de",
		"The file is in the directory and it is read by the daemon when it starts, as the others are.":     "en",
		"設定ファイルは /etc にあります。":                                                                              "ja",
		// No stopwords to count: the detector's trigrams decide.
		"Paketverwaltung Systemverwaltung Netzwerkkonfiguration Datensicherung Tastaturbelegung": "de",
	} {
		if got, ok := DetectPassage(text, among); !ok || got != want {
			t.Errorf("DetectPassage(%q) = %q, %v; want %q", text, got, ok, want)
		}
	}
	// Russian by its stopwords, among languages of the Latin script and its own.
	among = []string{"en", "es", "pt", "ru"}
	for text, want := range map[string]string{
		"Файл конфигурации находится в каталоге /etc, и он читается при запуске службы, как и другие.": "ru",
		"El archivo de configuración está en el directorio y se lee cuando el servicio se inicia.":     "es",
		"O arquivo de configuração fica no diretório e é lido quando o serviço é iniciado.":            "pt",
	} {
		if got, ok := DetectPassage(text, among); !ok || got != want {
			t.Errorf("DetectPassage(%q) = %q, %v; want %q", text, got, ok, want)
		}
	}
	// A passage is in a script's language when most of its letters are: an English list of a book's
	// translations names them in their own scripts.
	english := "The book is translated into many languages: the Russian edition (Русский) and the Ukrainian one (Українська) are on the site too."
	if got, ok := DetectPassage(english, among); !ok || got != "en" {
		t.Errorf("DetectPassage(%q) = %q, %v; want en", english, got, ok)
	}
	if got, ok := DetectPassage("whatever", []string{"fr"}); !ok || got != "fr" {
		t.Errorf("one language: %q, %v", got, ok)
	}
}

// A question's commands and names do not make it another language: its function words decide, and a question
// that has too few of them and too few letters for sure statistics is left to the caller's default.
func TestDetectQuestion(t *testing.T) {
	among := []string{"de", "en", "fr", "ja"}
	for q, want := range map[string]string{
		"approx apt cache - what port does it listen on by default?":                 "en", // trigrams: German
		"nfs export: if i dont specify rw or ro in /etc/exports, can clients write?": "en", // trigrams: French
		"how often does jira get upgraded":                                           "en", // trigrams: German
		"Wo ändere ich die Kernel-Parameter, mit denen GRUB startet?":                "de",
		"Où modifier les paramètres du noyau avec lesquels GRUB démarre ?":           "fr",
		"GRUBが起動時に渡すカーネルパラメーターはどこで変更しますか？":                                           "ja",
		// No function words, but letters enough for the statistics to be sure.
		"Paketverwaltung Systemverwaltung Netzwerkkonfiguration Datensicherung Tastaturbelegung": "de",
		// Short, but with letters English does not write.
		"Tastaturbelegung ändern?": "de",
		"Configurer le réseau":     "fr",
	} {
		if got, ok := DetectQuestion(q, among); !ok || got != want {
			t.Errorf("DetectQuestion(%q) = %q, %v; want %q", q, got, ok, want)
		}
	}
	for _, q := range []string{"default max_connections value?", "checkpoint_timeout default", "linguistics dept chair?", "Comment configurer GRUB ?"} {
		if got, ok := DetectQuestion(q, among); ok {
			t.Errorf("DetectQuestion(%q) = %q, sure; want the caller's default (too short and plain for trigrams)", q, got)
		}
	}
	// A quoted message is the software's language, not the visitor's: the question's own words decide.
	for q, want := range map[string]string{
		"dpkg-Fehler 'trying to overwrite ... which is also in package', wie erzwinge ich die Installation?":                "de",
		"dpkg-feil 'trying to overwrite ... which is also in package' – hvordan tvinger jeg gjennom installasjonen likevel": "nb",
		"Pourquoi « Permission denied » quand je lance le script ?":                                                         "fr",
		// Apostrophes are not quotes: nothing is left out of these.
		"what's the default port of the server, and doesn't it change?": "en",
	} {
		if got, ok := DetectQuestion(q, []string{"en", "de", "fr", "nb"}); !ok || got != want {
			t.Errorf("DetectQuestion(%q) = %q, %v; want %q", q, got, ok, want)
		}
	}
	for text, want := range map[string]string{
		"dpkg-feil 'trying to overwrite' – hvordan": "dpkg-feil   – hvordan",
		`said "role is not permitted" again`:        "said   again",
		"l'installation « en cours » d'un paquet":   "l'installation   d'un paquet",
		"c'è un pacchetto da un po'?":               "c'è un pacchetto da un po'?",
		"users' files 'x":                           "users' files 'x",
	} {
		if got := unquoted(text); got != want {
			t.Errorf("unquoted(%q) = %q, want %q", text, got, want)
		}
	}
	if got, ok := DetectQuestion("whatever", []string{"fr"}); !ok || got != "fr" {
		t.Errorf("one language: %q, %v", got, ok)
	}
	// A script only one of the site's languages writes decides, however few of the letters are in it; Spanish
	// alone writes inverted marks.
	among = []string{"en", "es", "pt", "ru"}
	for q, want := range map[string]string{
		"зачем нужна директория /srv?":                                    "ru",
		"как настроить proxy_pass в nginx?":                               "ru",
		"raid 6, ¿cuántos discos pueden morir antes de que pierda datos?": "es", // trigrams: Portuguese
		"uma versão estável do debian tem suporte por quantos anos?":      "pt",
		"where is the configuration of the ssh server daemon?":            "en",
	} {
		if got, ok := DetectQuestion(q, among); !ok || got != want {
			t.Errorf("DetectQuestion(%q) = %q, %v; want %q", q, got, ok, want)
		}
	}
	// More stopwords of other languages than of the default (among[0]), none of them ahead: trigrams choose among
	// those languages.
	among = []string{"en", "de", "es", "fr", "it", "ja", "pt", "ru", "zh"}
	if got, ok := DetectQuestion("comment supprimer un saut de page manuel ?", among); !ok || got != "fr" {
		t.Errorf("French among nine: %q, %v; want fr", got, ok)
	}
	if got, ok := DetectQuestion("dove sta la directory della cache di apt", among); !ok || got != "it" {
		t.Errorf("Italian among nine: %q, %v; want it", got, ok)
	}
	// Languages matched as written still have stopwords, which tell a short question's language: without them
	// these read as German.
	among = []string{"en", "de", "fr", "id"}
	for _, q := range []string{"di mana konfigurasi daemon server ssh?", "alat backup apa saja yang ada di debian?"} {
		if got, ok := DetectQuestion(q, among); !ok || got != "id" {
			t.Errorf("Indonesian %q: %q, %v", q, got, ok)
		}
	}
	if got, ok := DetectQuestion("com puc canviar la contrasenya de l'usuari?", []string{"en", "es", "ca"}); !ok || got != "ca" {
		t.Errorf("Catalan among Spanish: %q, %v", got, ok)
	}
	// Polish's stopwords hold "a", "i", "o", "w" and "do": five here to English's four, which is not a lead.
	if got, ok := DetectQuestion("how do i lock a users account temporarily w/o deleting anything", Analysed()); ok && got != "en" {
		t.Errorf("an English question among every language: %q", got)
	}
	// Vietnamese has no stopwords here, but letters of its own: Italian's "in" and "hai" do not make it Italian, nor
	// does any listed language's closeness; Norwegian is told by its trigrams too.
	for q, want := range map[string]string{
		"tôi có thể in hai trang cạnh nhau trên một tờ giấy không?": "vi",
		"làm sao để chèn mục lục?":                                  "vi",
	} {
		if got, ok := DetectQuestion(q, Analysed()); !ok || got != want {
			t.Errorf("DetectQuestion(%q) among every language = %q, %v; want %q", q, got, ok, want)
		}
	}
	// Two languages of one script: their trigrams tell them apart, where English would be no answer.
	for q, want := range map[string]string{"зачем нужна директория /srv?": "ru", "навіщо потрібна тека /srv?": "uk"} {
		if got, ok := DetectQuestion(q, []string{"en", "ru", "uk"}); !ok || got != want {
			t.Errorf("DetectQuestion(%q) among two languages of its script = %q, %v; want %q", q, got, ok, want)
		}
	}
}

// DetectQuestionTie names the languages a stopword vote left level when trigrams chose among them, and no others.
func TestDetectQuestionTie(t *testing.T) {
	among := []string{"en", "de", "es", "fr", "it", "ja", "pt", "ru"}
	for q, want := range map[string][]string{
		"a cosa serve la directory /srv?":            {"es", "it"},
		"comment supprimer un saut de page manuel ?": {"es", "fr"},
	} {
		if _, ok, tied := DetectQuestionTie(q, among); !ok || !slices.Equal(tied, want) {
			t.Errorf("DetectQuestionTie(%q): tied %q, %v; want %q", q, tied, ok, want)
		}
	}
	for _, q := range []string{"¿para qué sirve el directorio /srv?", "dove sta la directory della cache di apt",
		"where is the configuration of the ssh server daemon?", "Wo ändere ich die Kernel-Parameter, mit denen GRUB startet?", "зачем нужна директория /srv?"} {
		lang, ok, tied := DetectQuestionTie(q, among)
		if want, wantOK := DetectQuestion(q, among); lang != want || ok != wantOK || tied != nil {
			t.Errorf("DetectQuestionTie(%q) = %q, %v, %q; want DetectQuestion's %q, %v and no tie", q, lang, ok, tied, want, wantOK)
		}
	}
}

// A nil Language, as LanguageOf gives English, has the English stopwords.
func TestNilLanguageIsEnglish(t *testing.T) {
	var en *Language
	if LanguageOf("en") != en {
		t.Fatal("LanguageOf(en) is not nil")
	}
	if !en.IsStopword("the") || en.IsStopword("kernel") || en.IsStopword("und") {
		t.Errorf("nil Language stopwords: the %v, kernel %v, und %v", en.IsStopword("the"), en.IsStopword("kernel"), en.IsStopword("und"))
	}
}

// TestStopwordsOnly checks the languages analysed without a stemmer: their stopwords are left out and their
// words matched as written, Greek's without their accents.
func TestStopwordsOnly(t *testing.T) {
	for _, c := range []struct{ tag, stop, word string }{
		{"ca", "amb", "contrasenya"}, {"cs", "jako", "balíčky"}, {"id", "yang", "konfigurasi"},
	} {
		l := LanguageOf(c.tag)
		if l.Stemmed() || !l.IsStopword(c.stop) || l.IsStopword(c.word) || l.Stem(c.word) != fold(c.word) {
			t.Errorf("%s: stemmed %v, stopword %q %v, word %q %v (stem %q)", c.tag, l.Stemmed(), c.stop,
				l.IsStopword(c.stop), c.word, l.IsStopword(c.word), l.Stem(c.word))
		}
	}
	el := LanguageOf("el")
	for _, w := range []string{"είναι", "ΕΊΝΑΙ", "αυτούς", "ΑΥΤΟΎΣ"} { // the list writes "αυτουσ"
		if !el.IsStopword(w) {
			t.Errorf("Greek %q is no stopword", w)
		}
	}
	if el.IsStopword("πακέτα") || el.Stem("Πακέτα") != "πακετα" || el.Stem("προϊόν") != "προιον" {
		t.Errorf("Greek words: %q %q", el.Stem("Πακέτα"), el.Stem("προϊόν"))
	}
	if got, ok := DetectQuestion("πού είναι το αρχείο ρυθμίσεων του ssh;", []string{"en", "de", "el"}); !ok || got != "el" {
		t.Errorf("Greek question: %q, %v", got, ok)
	}
}

func TestAnalysed(t *testing.T) {
	got := Analysed()
	if got[0] != "en" || !slices.Contains(got, "de") || !slices.Contains(got, "ja") || slices.Contains(got, "nb") ||
		!slices.IsSorted(got[1:]) {
		t.Errorf("Analysed() = %v: English first, then each analysed language once, sorted", got)
	}
	for _, tag := range got[1:] {
		if LanguageOf(tag) == nil || LanguageOf(tag).Tag() != tag {
			t.Errorf("%s has no analysis of its own", tag)
		}
	}
}
