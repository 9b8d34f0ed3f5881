package retrieval

import (
	"slices"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/ragproxy/ragproxy/textnorm"
)

// Answer kinds in languages other than English. A German visitor asks "wie lange", a Spanish one "¿cuántos
// años?", a Russian one "сколько лет", and the sentence that answers states a duration in its own words ("eine
// erwartete Lebensdauer von ca. 5 Jahren"). Each language here has the phrases that ask for a kind (read with their
// accents dropped, as visitors often type them) and the words that state one (time units, months, numbers,
// currencies), the units matched by their Snowball stems so that every inflection counts ("лет", "года", "год";
// plurals are listed too, which a stemmer leaves whole in a short word: Spanish "años").

// kindLanguage is how one language asks for kinds of answer and states them.
type kindLanguage struct {
	// duration and number are phrases (words without accents) that ask "how long" or "how often", and "how
	// many" or "how much"; a number phrase followed by a time unit asks for a duration, by a money noun for an
	// amount, by a size noun for a size.
	duration, number [][]string
	// date, person and place are the words that, opening a question, ask "when", "who" and "where".
	date, person, place []string
	// which are the interrogative determiners that ask for a number before a noun of numberNouns ("welcher
	// Port"), or for a size before one of sizeNouns.
	which []string
	// howTo reports whether the question's words (without accents) from some position on ask how to do
	// something; howToAnywhere lets it be any position, not only the first.
	howTo         func(words []string) bool
	howToAnywhere bool
	// Nouns and units, matched by their stems.
	numberNouns, sizeNouns, moneyNouns, timeUnits, sizeUnits []string
	// Words matched as written, lower case: frequencies ("täglich"), months and their inflections, and numbers
	// written as words.
	frequencies, dateWords, numberWords []string

	once sync.Once
	set  *kindSets
}

// kindLanguages are the languages whose questions have answer kinds besides English, by primary subtag (Dutch, the
// Scandinavian languages and Polish in answerkinds_more.go).
var kindLanguages = map[string]*kindLanguage{
	"nl": dutchKinds, "sv": swedishKinds, "no": norwegianKinds, "da": danishKinds, "pl": polishKinds,
	"de": {
		duration: phrases("wie lange", "wie oft", "wie schnell", "wie bald", "wie haufig"),
		number:   phrases("wie viele", "wie viel", "wieviele", "wieviel", "wie hoch"),
		date:     []string{"wann"}, person: []string{"wer"}, place: []string{"wo"},
		which: []string{"welche", "welcher", "welches", "welchen", "welchem"},
		howTo: func(w []string) bool { return len(w) > 2 && w[0] == "wie" && w[2] == "ich" }, howToAnywhere: true,
		numberNouns: []string{
			"port", "portnummer", "nummer", "zahl", "version", "wert", "standardwert", "code", "abschnitt",
		},
		sizeNouns:  []string{"größe", "speicher", "speicherplatz", "platz", "länge", "bandbreite"},
		moneyNouns: []string{"kosten", "kostet", "gebühr", "preis"},
		timeUnits: []string{
			"sekunde", "sekunden", "minute", "minuten", "stunde", "stunden", "tag", "tage", "tagen", "woche", "wochen",
			"monat", "monate", "monaten", "jahr", "jahre", "jahren", "semester",
		},
		sizeUnits: []string{"zeichen", "byte"},
		frequencies: []string{
			"täglich", "tägliche", "wöchentlich", "wöchentliche", "monatlich", "monatliche", "jährlich", "jährliche",
			"stündlich", "nächtlich",
		},
		dateWords: []string{
			"januar", "februar", "märz", "april", "mai", "juni", "juli", "august", "september", "oktober", "november",
			"dezember", "montag", "dienstag", "mittwoch", "donnerstag", "freitag", "samstag", "sonntag",
		},
		numberWords: []string{
			"zwei", "drei", "vier", "fünf", "sechs", "sieben", "acht", "neun", "zehn", "elf", "zwölf", "zwanzig",
			"hundert", "tausend",
		},
	},
	"fr": {
		duration: phrases("combien de temps", "a quelle frequence", "tous les combien", "en combien de temps"),
		number:   phrases("combien"),
		date:     []string{"quand"}, person: []string{"qui"}, place: []string{"ou"}, // "où", read without its accent
		which: []string{"quel", "quelle", "quels", "quelles"},
		howTo: opens("comment"), howToAnywhere: true,
		numberNouns: []string{"port", "numéro", "nombre", "version", "valeur", "code", "section"},
		sizeNouns:   []string{"taille", "espace", "mémoire", "longueur"},
		moneyNouns:  []string{"coûte", "coût", "prix", "frais", "tarif"},
		timeUnits: []string{
			"seconde", "secondes", "minute", "minutes", "heure", "heures", "jour", "jours", "journée", "semaine",
			"semaines", "mois", "an", "ans", "année", "années", "semestre",
		},
		sizeUnits: []string{"caractère", "octet", "ko", "mo", "go", "to"},
		frequencies: []string{
			"quotidien", "quotidienne", "quotidiennement", "hebdomadaire", "mensuel", "mensuelle", "annuel", "annuelle",
			"chaque",
		},
		dateWords: []string{
			"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre",
			"décembre", "lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche",
		},
		numberWords: []string{
			"deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix", "onze", "douze", "vingt", "cent",
			"mille",
		},
	},
	"es": {
		duration: phrases("cuanto tiempo", "con que frecuencia", "cada cuanto", "cuanto tarda", "cuanto dura"),
		number:   phrases("cuantos", "cuantas", "cuanto", "cuanta"),
		date:     []string{"cuando"}, person: []string{"quien", "quienes"}, place: []string{"donde"},
		which:       []string{"que", "cual", "cuales"},
		howTo:       opens("como"),
		numberNouns: []string{"puerto", "número", "versión", "valor", "código", "sección"},
		sizeNouns:   []string{"tamaño", "espacio", "memoria", "longitud"},
		moneyNouns:  []string{"cuesta", "costo", "coste", "precio", "tarifa"},
		timeUnits: []string{
			"segundo", "segundos", "minuto", "minutos", "hora", "horas", "día", "días", "semana", "semanas", "mes",
			"meses", "año", "años", "semestre",
		},
		sizeUnits: []string{"carácter", "caracteres", "byte"},
		frequencies: []string{
			"diario", "diaria", "diariamente", "semanal", "semanalmente", "mensual", "mensualmente", "anual",
			"anualmente", "cada",
		},
		dateWords: []string{
			"enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "setiembre",
			"octubre", "noviembre", "diciembre", "lunes", "martes", "miércoles", "jueves", "viernes", "sábado",
			"domingo",
		},
		numberWords: []string{
			"dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve", "diez", "once", "doce", "veinte",
			"cien", "mil",
		},
	},
	"it": {
		duration: phrases("quanto tempo", "ogni quanto", "con quale frequenza", "quanto spesso", "quanto dura"),
		number:   phrases("quanti", "quante", "quanto", "quanta"),
		date:     []string{"quando"}, person: []string{"chi"}, place: []string{"dove"},
		which:       []string{"quale", "quali", "che"},
		howTo:       opens("come"),
		numberNouns: []string{"porta", "numero", "versione", "valore", "codice", "sezione"},
		sizeNouns:   []string{"dimensione", "spazio", "memoria", "lunghezza"},
		moneyNouns:  []string{"costa", "costo", "prezzo", "tariffa"},
		timeUnits: []string{
			"secondo", "secondi", "minuto", "minuti", "ora", "ore", "giorno", "giorni", "settimana", "settimane",
			"mese", "mesi", "anno", "anni", "semestre",
		},
		sizeUnits: []string{"carattere", "byte"},
		frequencies: []string{
			"giornaliero", "giornaliera", "quotidiano", "quotidiana", "settimanale", "mensile", "annuale", "ogni",
		},
		dateWords: []string{
			"gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre", "ottobre",
			"novembre", "dicembre", "lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato", "domenica",
		},
		numberWords: []string{
			"due", "tre", "quattro", "cinque", "sei", "sette", "otto", "nove", "dieci", "undici", "dodici", "venti",
			"cento", "mille",
		},
	},
	"pt": {
		duration: phrases("quanto tempo", "com que frequencia", "de quanto em quanto", "quanto demora", "quanto dura"),
		number:   phrases("quantos", "quantas", "quanto", "quanta"),
		date:     []string{"quando"}, person: []string{"quem"}, place: []string{"onde"},
		which:       []string{"qual", "quais", "que"},
		howTo:       opens("como"),
		numberNouns: []string{"porta", "número", "versão", "valor", "código", "seção", "secção"},
		sizeNouns:   []string{"tamanho", "espaço", "memória", "comprimento"},
		moneyNouns:  []string{"custa", "custo", "preço", "taxa"},
		timeUnits: []string{
			"segundo", "segundos", "minuto", "minutos", "hora", "horas", "dia", "dias", "semana", "semanas", "mês",
			"meses", "ano", "anos", "semestre",
		},
		sizeUnits: []string{"caractere", "caracteres", "byte"},
		frequencies: []string{
			"diário", "diária", "diariamente", "semanal", "semanalmente", "mensal", "mensalmente", "anual",
			"anualmente", "cada",
		},
		dateWords: []string{
			"janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro",
			"novembro", "dezembro", "segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira",
			"sábado", "domingo",
		},
		numberWords: []string{
			"dois", "duas", "três", "quatro", "cinco", "seis", "sete", "oito", "nove", "dez", "onze", "doze", "vinte",
			"cem", "mil",
		},
	},
	"ru": {
		duration: phrases("как долго", "сколько времени", "как часто", "как скоро", "как быстро"),
		number:   phrases("сколько"),
		date:     []string{"когда"}, person: []string{"кто"}, place: []string{"где"},
		which: []string{
			"какой", "какая", "какое", "какие", "каким", "какого", "какую", "который", "которая", "которое",
		},
		howTo:       opens("как"),
		numberNouns: []string{"порт", "номер", "число", "версия", "значение", "код", "раздел"},
		sizeNouns:   []string{"размер", "место", "память", "длина"},
		moneyNouns:  []string{"стоит", "стоимость", "цена", "плата"},
		timeUnits: []string{
			"секунда", "минута", "час", "день", "дня", "дней", "неделя", "месяц", "год", "года", "лет", "семестр",
		},
		sizeUnits: []string{"символ", "байт", "кб", "мб", "гб", "тб"},
		frequencies: []string{
			"ежедневно", "ежедневный", "еженедельно", "еженедельный", "ежемесячно", "ежемесячный", "ежегодно",
			"ежегодный", "каждый", "каждые", "каждую", "каждое",
		},
		dateWords: []string{
			"январь", "января", "февраль", "февраля", "март", "марта", "апрель", "апреля", "май", "мая", "июнь", "июня",
			"июль", "июля", "август", "августа", "сентябрь", "сентября", "октябрь", "октября", "ноябрь", "ноября",
			"декабрь", "декабря", "понедельник", "вторник", "среда", "четверг", "пятница", "суббота", "воскресенье",
		},
		numberWords: []string{
			"два", "две", "двух", "три", "трех", "трёх", "четыре", "пять", "пяти", "шесть", "семь", "восемь", "девять",
			"десять", "двадцать", "сто", "тысяча",
		},
	},
}

// opens is a howTo that asks how to do something when the question opens with word and goes on ("como …",
// "hur …", "jak …").
func opens(word string) func(words []string) bool {
	return func(w []string) bool { return len(w) > 1 && w[0] == word }
}

// phrases splits each of list into its words.
func phrases(list ...string) [][]string {
	out := make([][]string, len(list))
	for i, p := range list {
		out[i] = strings.Fields(p)
	}
	return out
}

// kindSets are a kindLanguage's nouns and units as stems, and its words as sets, built once per language.
type kindSets struct {
	numberNouns, sizeNouns, moneyNouns, timeUnits, sizeUnits map[string]bool
	frequencies, dateWords, numberWords                      map[string]bool
}

// sets returns the language's stem and word sets, built on first use.
func (k *kindLanguage) sets(l *textnorm.Language) *kindSets {
	k.once.Do(func() {
		stems := func(words []string) map[string]bool {
			m := make(map[string]bool, len(words))
			for _, w := range words {
				m[l.Stem(w)] = true
			}
			return m
		}
		k.set = &kindSets{numberNouns: stems(k.numberNouns), sizeNouns: stems(k.sizeNouns), moneyNouns: stems(k.moneyNouns),
			timeUnits: stems(k.timeUnits), sizeUnits: stems(k.sizeUnits), frequencies: setOf(k.frequencies...),
			dateWords: setOf(k.dateWords...), numberWords: setOf(k.numberWords...)}
	})
	return k.set
}

// kindOf returns the kind of answer a question in the language l asks for, and the words of it that only ask
// (as questionKind does for English), or false when the language has no kinds here.
func kindOf(l *textnorm.Language, question string) (answerKind, []string, bool) {
	if l == nil {
		return kindNone, nil, false
	}
	if c := cjkKindLanguages[l.Tag()]; c != nil {
		return cjkKindOf(c, question), nil, true
	}
	k := kindLanguages[l.Tag()]
	if k == nil {
		return kindNone, nil, false
	}
	sets := k.sets(l)
	var words, plain []string // as written (lower case) and without accents
	textnorm.Words(l.Normalize(question), func(w string) bool {
		words = append(words, w)
		plain = append(plain, unaccent(w))
		return true
	})
	var ask askedKind
	set := ask.set
	// after is the kind the noun within two words after position i asks for, kindNone when none does.
	after := func(i int) answerKind {
		for j := i; j < min(len(words), i+2); j++ {
			st := l.Stem(words[j])
			switch {
			case sets.timeUnits[st]:
				return kindDuration
			case sets.moneyNouns[st]:
				return kindMoney
			case sets.sizeNouns[st]:
				return kindSize
			case sets.numberNouns[st]:
				return kindNumber
			}
		}
		return kindNone
	}
	for i := range plain {
		if p := phraseAt(plain, i, k.duration); p != nil {
			set(kindDuration, words[i:i+len(p)]...)
			continue
		}
		if p := phraseAt(plain, i, k.number); p != nil {
			a := after(i + len(p)) // "wie viele Jahre" asks for a duration, "wie viele Ports" a number
			if a == kindNone {
				a = kindNumber
			}
			set(a, words[i:i+len(p)]...)
			continue
		}
		if slices.Contains(k.which, plain[i]) {
			if a := after(i + 1); a == kindNumber || a == kindSize {
				set(a)
			}
		}
		if (i == 0 || k.howToAnywhere) && k.howTo(plain[i:]) {
			set(kindCommand) // over a number, as in English: "wie finde ich raus, welche Version …"
		}
	}
	if len(plain) > 0 {
		switch {
		case slices.Contains(k.date, plain[0]):
			set(kindDate, words[0])
		case slices.Contains(k.person, plain[0]):
			set(kindPerson, words[0])
		case slices.Contains(k.place, plain[0]) && ask.kind == kindNone: // "wo sehe ich, wie viele …" asks a number
			set(kindPlace, words[0])
		}
	}
	return ask.kind, ask.cues, true
}

// phraseAt returns the phrase of list that words hold from position i, nil for none.
func phraseAt(words []string, i int, list [][]string) []string {
	for _, p := range list {
		if i+len(p) <= len(words) && slices.Equal(words[i:i+len(p)], p) {
			return p
		}
	}
	return nil
}

// unaccent is w with its Latin letters' accents dropped ("cuántos" is "cuantos", "fréquence" "frequence") and
// Russian "ё" as "е"; other scripts' letters stay as they are ("й" is a letter of its own).
func unaccent(w string) string {
	ascii := true
	for i := 0; i < len(w); i++ {
		if w[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return w
	}
	var b strings.Builder
	for _, r := range w {
		switch {
		case r == 'ё':
			b.WriteRune('е')
		case r >= 0x80 && unicode.Is(unicode.Latin, r):
			for _, d := range norm.NFD.String(string(r)) {
				if !unicode.Is(unicode.Mn, d) {
					b.WriteRune(d)
				}
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
