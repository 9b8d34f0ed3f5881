package retrieval

// Answer kinds in Dutch, the Scandinavian languages and Polish, whose help pages write a procedure's steps as
// imperatives ("Kies Extra - Regelnummering.", "Välj Verktyg - Radnumrering.", "Wybierz Narzędzia - Numeracja
// wierszy."). Their phrases are written without accents, as kindOf reads a question's words ("hur länge" as "hur
// lange", "når" as "nar", "jak długo" as "jak dlugo"); "æ", "ø" and "ł" are letters of their own and stay.
var (
	dutchKinds = &kindLanguage{
		duration: phrases("hoe lang", "hoe vaak", "hoe snel", "hoe lang duurt"),
		number:   phrases("hoeveel"),
		date:     []string{"wanneer"}, person: []string{"wie"}, place: []string{"waar"},
		which:       []string{"welke", "welk"},
		howTo:       opens("hoe"),
		numberNouns: []string{"poort", "poortnummer", "nummer", "getal", "versie", "waarde", "code", "sectie"},
		sizeNouns:   []string{"grootte", "ruimte", "geheugen", "lengte"},
		moneyNouns:  []string{"kost", "kosten", "prijs", "tarief"},
		timeUnits: []string{
			"seconde", "seconden", "minuut", "minuten", "uur", "uren", "dag", "dagen", "week", "weken", "maand",
			"maanden", "jaar", "jaren", "semester",
		},
		sizeUnits: []string{"teken", "tekens", "byte", "bytes"},
		frequencies: []string{
			"dagelijks", "dagelijkse", "wekelijks", "wekelijkse", "maandelijks", "maandelijkse", "jaarlijks",
			"jaarlijkse", "elke", "iedere",
		},
		dateWords: []string{
			"januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus", "september", "oktober",
			"november", "december", "maandag", "dinsdag", "woensdag", "donderdag", "vrijdag", "zaterdag", "zondag",
		},
		numberWords: []string{
			"twee", "drie", "vier", "vijf", "zes", "zeven", "acht", "negen", "tien", "elf", "twaalf", "twintig",
			"honderd", "duizend",
		},
	}
	swedishKinds = &kindLanguage{
		duration: phrases("hur lange", "hur ofta", "hur snabbt", "hur lang tid"),
		number:   phrases("hur manga", "hur mycket"),
		date:     []string{"nar"}, person: []string{"vem"}, place: []string{"var", "vart"},
		which:       []string{"vilken", "vilket", "vilka"},
		howTo:       opens("hur"),
		numberNouns: []string{"port", "portnummer", "nummer", "tal", "version", "värde", "kod", "avsnitt"},
		sizeNouns:   []string{"storlek", "utrymme", "minne", "längd"},
		moneyNouns:  []string{"kostar", "kostnad", "pris", "avgift"},
		timeUnits: []string{
			"sekund", "sekunder", "minut", "minuter", "timme", "timmar", "dag", "dagar", "vecka", "veckor", "månad",
			"månader", "år", "termin",
		},
		sizeUnits: []string{"tecken", "byte"},
		frequencies: []string{
			"dagligen", "daglig", "dagliga", "veckovis", "varje", "månatlig", "månatligen", "årlig", "årligen",
		},
		dateWords: []string{
			"januari", "februari", "mars", "april", "maj", "juni", "juli", "augusti", "september", "oktober",
			"november", "december", "måndag", "tisdag", "onsdag", "torsdag", "fredag", "lördag", "söndag",
		},
		numberWords: []string{
			"två", "tre", "fyra", "fem", "sex", "sju", "åtta", "nio", "tio", "elva", "tolv", "tjugo", "hundra", "tusen",
		},
	}
	// Norwegian (Bokmål, the language "no" that "nb" and "nn" are analysed as) and Danish ask alike: "hvor" opens
	// "hvor lenge" and "hvor mange" as well as a question for a place, which it asks only when nothing else is.
	norwegianKinds = &kindLanguage{
		duration: phrases("hvor lenge", "hvor ofte", "hvor raskt", "hvor lang tid"),
		number:   phrases("hvor mange", "hvor mye"),
		date:     []string{"nar"}, person: []string{"hvem"}, place: []string{"hvor"},
		which:       []string{"hvilken", "hvilket", "hvilke"},
		howTo:       opens("hvordan"),
		numberNouns: []string{"port", "portnummer", "nummer", "tall", "versjon", "verdi", "kode", "avsnitt", "seksjon"},
		sizeNouns:   []string{"størrelse", "plass", "minne", "lengde"},
		moneyNouns:  []string{"koster", "kostnad", "pris", "avgift"},
		timeUnits: []string{
			"sekund", "sekunder", "minutt", "minutter", "time", "timer", "dag", "dager", "uke", "uker", "måned",
			"måneder", "år", "semester",
		},
		sizeUnits: []string{"tegn", "byte"},
		frequencies: []string{
			"daglig", "daglige", "ukentlig", "ukentlige", "månedlig", "månedlige", "årlig", "årlige", "hver",
		},
		dateWords: []string{
			"januar", "februar", "mars", "april", "mai", "juni", "juli", "august", "september", "oktober", "november",
			"desember", "mandag", "tirsdag", "onsdag", "torsdag", "fredag", "lørdag", "søndag",
		},
		numberWords: []string{
			"to", "tre", "fire", "fem", "seks", "sju", "syv", "åtte", "ni", "ti", "elleve", "tolv", "tjue", "hundre",
			"tusen",
		},
	}
	danishKinds = &kindLanguage{
		duration: phrases("hvor længe", "hvor ofte", "hvor hurtigt", "hvor lang tid"),
		number:   phrases("hvor mange", "hvor meget"),
		date:     []string{"hvornar"}, person: []string{"hvem"}, place: []string{"hvor"},
		which:       []string{"hvilken", "hvilket", "hvilke"},
		howTo:       opens("hvordan"),
		numberNouns: []string{"port", "portnummer", "nummer", "tal", "version", "værdi", "kode", "afsnit"},
		sizeNouns:   []string{"størrelse", "plads", "hukommelse", "længde"},
		moneyNouns:  []string{"koster", "pris", "gebyr", "omkostning"},
		timeUnits: []string{
			"sekund", "sekunder", "minut", "minutter", "time", "timer", "dag", "dage", "uge", "uger", "måned",
			"måneder", "år", "semester",
		},
		sizeUnits: []string{"tegn", "byte"},
		frequencies: []string{
			"daglig", "daglige", "ugentlig", "ugentlige", "månedlig", "månedlige", "årlig", "årlige", "hver",
		},
		dateWords: []string{
			"januar", "februar", "marts", "april", "maj", "juni", "juli", "august", "september", "oktober", "november",
			"december", "mandag", "tirsdag", "onsdag", "torsdag", "fredag", "lørdag", "søndag",
		},
		numberWords: []string{
			"to", "tre", "fire", "fem", "seks", "syv", "otte", "ni", "ti", "elleve", "tolv", "tyve", "hundrede",
			"tusind",
		},
	}
	// Polish inflects its nouns by case ("lat", "roku", "minut"), which the units' Stempel stems bring together.
	polishKinds = &kindLanguage{
		duration: phrases("jak długo", "jak czesto", "jak szybko", "ile czasu", "co ile"),
		number:   phrases("ile"),
		date:     []string{"kiedy"}, person: []string{"kto"}, place: []string{"gdzie"},
		which:       []string{"ktory", "ktora", "ktore", "jaki", "jaka", "jakie"},
		howTo:       opens("jak"),
		numberNouns: []string{"port", "numer", "liczba", "wersja", "wartość", "kod", "sekcja"},
		sizeNouns:   []string{"rozmiar", "miejsce", "pamięć", "długość"},
		moneyNouns:  []string{"kosztuje", "koszt", "cena", "opłata"},
		timeUnits: []string{
			"sekunda", "sekund", "minuta", "minut", "godzina", "godzin", "dzień", "dni", "tydzień", "tygodni",
			"miesiąc", "miesięcy", "rok", "lata", "lat", "semestr",
		},
		sizeUnits: []string{"znak", "znaków", "bajt", "bajtów"},
		frequencies: []string{
			"codziennie", "codzienny", "co", "tygodniowo", "cotygodniowy", "miesięcznie", "comiesięczny", "rocznie",
			"coroczny",
		},
		dateWords: []string{
			"stycznia", "lutego", "marca", "kwietnia", "maja", "czerwca", "lipca", "sierpnia", "września",
			"października", "listopada", "grudnia", "styczeń", "luty", "marzec", "kwiecień", "maj", "czerwiec", "lipiec",
			"sierpień", "wrzesień", "październik", "listopad", "grudzień", "poniedziałek", "wtorek", "środa", "czwartek",
			"piątek", "sobota", "niedziela",
		},
		numberWords: []string{
			"dwa", "dwie", "trzy", "cztery", "pięć", "sześć", "siedem", "osiem", "dziewięć", "dziesięć", "dwadzieścia",
			"sto", "tysiąc",
		},
	}
)

// stepVerbs are the verbs a step of a procedure opens with in the help pages of languages whose imperative has no
// ending of its own to tell it by (Dutch and the Scandinavian languages write the verb's stem, "Kies", "Välj",
// "Velg", "Vælg"; Polish's imperatives end as other forms do, "Wybierz", "Kliknij"; Spanish's and Portuguese's
// formal imperatives end in the "-e" and "-a" of many words, "Seleccione", "Escolha"), lower case.
var stepVerbs = map[string]map[string]bool{
	"nl": setOf("kies", "klik", "selecteer", "druk", "typ", "open", "ga", "voer", "sleep", "dubbelklik", "rechtsklik",
		"schakel", "markeer", "wijzig", "voeg", "gebruik", "stel", "zet", "sluit", "plaats", "installeer"),
	"sv": setOf("välj", "klicka", "markera", "tryck", "skriv", "öppna", "gå", "ange", "dra", "dubbelklicka",
		"högerklicka", "avmarkera", "infoga", "stäng", "använd", "ställ", "lägg", "aktivera", "installera", "kör"),
	"no": setOf("velg", "klikk", "trykk", "skriv", "åpne", "marker", "gå", "angi", "dra", "dobbeltklikk", "høyreklikk",
		"sett", "legg", "bruk", "aktiver", "installer", "kjør"),
	"da": setOf("vælg", "klik", "tryk", "skriv", "åbn", "marker", "gå", "angiv", "træk", "dobbeltklik", "højreklik",
		"brug", "indsæt", "aktivér", "aktiver", "installer", "kør"),
	"es": setOf("seleccione", "elija", "escoja", "pulse", "haga", "oprima", "presione", "escriba", "introduzca", "vaya",
		"abra", "active", "desactive", "marque", "desmarque", "arrastre", "inserte", "cierre", "use", "utilice",
		"coloque", "defina", "establezca", "instale", "ejecute", "mantenga"),
	"pt": setOf("escolha", "selecione", "seleccione", "clique", "prima", "pressione", "digite", "escreva", "introduza",
		"abra", "vá", "ative", "active", "desative", "marque", "desmarque", "arraste", "insira", "feche", "use",
		"utilize", "defina", "instale", "execute", "mantenha"),
	"pl": setOf("wybierz", "kliknij", "naciśnij", "zaznacz", "wpisz", "otwórz", "przejdź", "przeciągnij", "wprowadź",
		"ustaw", "dodaj", "wstaw", "użyj", "usuń", "zamknij", "uruchom", "zainstaluj", "odznacz", "włącz", "wyłącz"),
}
