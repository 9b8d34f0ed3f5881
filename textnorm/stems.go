package textnorm

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// A Snowball stemmer strips inflections, and a derivational ending or two, by its rules; where those rules leave
// a verb and the nouns and participles made from it apart, a help page that writes the noun ("Nummerierung",
// "modification") never meets the question that writes the verb ("nummerieren", "modifier"). The rules here join
// them for German and French.

// stemEnd is an end of a Snowball stem that goes: drop of its last bytes when the stem ends with suffix and is at
// least minLen bytes long.
type stemEnd struct {
	suffix string
	minLen int
	drop   int
}

// trimStem applies the first of ends that matches t.
func trimStem(t string, ends []stemEnd) string {
	for _, e := range ends {
		if len(t) >= e.minLen && strings.HasSuffix(t, e.suffix) {
			return t[:len(t)-e.drop]
		}
	}
	return t
}

// germanStems give a German verb in -ieren and the nouns and participles made from it one stem. Snowball's German
// stemmer strips "-en" and then "-er" from the verb ("nummerieren" is "nummeri", "addiere" "addi"), but from
// "-ierung" and "-ierend" only the derivational ending ("Nummerierung" is "nummerier", "addierenden" "addier"),
// and from the participle nothing ("formatiert"). The "-er" and "-ert" left go too. Short stems keep theirs
// ("vier", "hier", "Tier").
var germanStems = []stemEnd{{"ier", 6, 2}, {"iert", 7, 3}}

// frenchStems give a French verb and the nouns made from it one stem: a verb in "-ifier" and its noun in
// "-ification" ("modifier" is "modifi", "modification" "modif"), and a verb and its noun in "-age" ("afficher" is
// "affich", "affichage" "affichag"; "démarrer", "démarrage"). Short stems keep their "-ag" ("partag", "montag",
// "messag").
var frenchStems = []stemEnd{{"ifi", 5, 1}, {"ag", 7, 2}}

// germanParticiple is the verb of a German weak participle, "ge-" and "-t" dropped: "gespeichert" is
// "speicher", "ausgewählt" "auswähl" (a separable prefix before the "ge-"), which Snowball then stems as it
// stems "speichern" and "auswählen"; Snowball itself leaves participles whole, and the page that says what "wird
// gespeichert" never met the question that asks how to "speichern". This is the prefix rule of the CISTEM
// stemmer (Weißweiler and Fraser, "Developing a Stemmer for German Based on a Comparative Analysis of Publicly
// Available Stemmers", GSCL 2017), kept to participles. Nouns in "-heit", "-keit" and "-schaft" are left whole:
// "Geschwindigkeit" would lose its "-t" and no longer meet "Geschwindigkeiten".
func germanParticiple(w string) string {
	// A participle used as an adjective takes an ending after its "-t" ("die geänderte Datei").
	core := w
	for _, e := range adjectiveEndings {
		if c, ok := strings.CutSuffix(w, e); ok && strings.HasSuffix(c, "t") {
			core = c
			break
		}
	}
	if len(core) < 7 || !strings.HasSuffix(core, "t") || strings.HasSuffix(core, "heit") || strings.HasSuffix(core, "keit") ||
		strings.HasSuffix(core, "schaft") {
		return w
	}
	for _, p := range separablePrefixes {
		if rest, ok := strings.CutPrefix(core, p+"ge"); ok && len(rest) >= 4 {
			return p + rest[:len(rest)-1]
		}
	}
	return w
}

// adjectiveEndings are the endings of a German adjective, the longest first.
var adjectiveEndings = []string{"en", "em", "er", "es", "e"}

// separablePrefixes are the separable prefixes of German verbs that stand before a participle's "ge-"
// ("ausgewählt", "eingefügt"), "" for a verb without one.
var separablePrefixes = []string{"", "ab", "an", "auf", "aus", "bei", "ein", "mit", "nach", "vor", "zu", "zurück", "weg", "her", "hin", "um"}

// russianYo is w with "ё" written "е", as most Russian text writes it ("всё" and "все", "ещё" and "еще" are one word
// to a reader); Snowball's Russian stemmer takes them as different letters.
func russianYo(w string) string { return strings.ReplaceAll(w, "ё", "е") }

// withoutAccents is a folded Greek word without its accents and diaereses ("είναι" is "ειναι", "προϊόν"
// "προιον"): Greek is often typed without them, and the stopword list, Lucene's, writes none, as Lucene reads
// Greek (its GreekLowerCaseFilter).
func withoutAccents(w string) string {
	if isASCII(w) {
		return w // commands and names: nothing to take off
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(w) {
		if !unicode.Is(unicode.Mn, r) {
			b.WriteRune(r)
		}
	}
	return norm.NFC.String(b.String())
}

// persianPlain is a folded Persian word as Lucene's Persian analysis reads it, and as its stopword list (Jacques
// Savoy's) writes it: Arabic's letter variants made one (alef with hamza or madda as alef, teh marbuta as heh,
// alef maksura as yeh), then Persian's (Farsi yeh and yeh barree as Arabic yeh, keheh as kaf, heh with yeh or
// heh goal as heh), without the short vowels, hamza above and tatweel. Persian keyboards type "ی" and "ک", older
// texts and Arabic ones "ي" and "ك": one word either way.
func persianPlain(w string) string {
	if isASCII(w) {
		return w
	}
	var b strings.Builder
	for _, r := range w {
		switch {
		case r == 'أ' || r == 'إ' || r == 'آ':
			b.WriteRune('ا')
		case r == 'ة' || r == 'ۀ' || r == 'ہ':
			b.WriteRune('ه')
		case r == 'ى' || r == 'ی' || r == 'ے':
			b.WriteRune('ي')
		case r == 'ک':
			b.WriteRune('ك')
		case r == '\u0640' || r >= '\u064B' && r <= '\u065F' || r == '\u0670':
			// tatweel, the short vowels and hamza above are left out
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isASCII reports whether w is ASCII alone, which the per-language rewrites of letters leave as it is.
func isASCII(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
