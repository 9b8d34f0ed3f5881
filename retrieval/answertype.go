package retrieval

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ragproxy/ragproxy/markdown"
	"github.com/ragproxy/ragproxy/textnorm"
)

// Answer types. A question says what kind of thing answers it: "how long" a duration, "how much does it cost" an
// amount of money, "when" a date or a time, "who" a person, "how big" a size, and on a documentation site "how do
// I" a command ("how do i lock a user's account" is answered by "`passwd -l user`"). The sentence that answers
// states one ("with a retention of approximately 14 days"), often without repeating the question's words, which
// its heading or the sentence before hold ("Blocker" then "Goal: 24 hours to respond"). Expected answer types are
// among the oldest signals of question answering (the TREC QA track's systems classified questions by them); here
// a question's type comes from its wh-phrase and a unit holds one when its words have that type's shape.

// answerKind is the kind of answer a question asks for.
type answerKind uint8

const (
	kindNone answerKind = iota
	// kindNumber is any number: "how many", "what port", a limit, a default.
	kindNumber
	// kindDuration is a number of time units ("14 days", "72h") or a frequency ("weekly", "every six months").
	kindDuration
	// kindSize is a number of bytes, bits or characters ("150 GB", "4096 bits", "eight characters").
	kindSize
	// kindMoney is an amount in a currency ("$80").
	kindMoney
	// kindDate is a date or a time of day ("Wednesday, August 24, 2016", "0200 UTC", "2022-10-13").
	kindDate
	// kindPerson is a name, as a role label gives it ("Instructor: Zucman") or a short value under a role heading.
	kindPerson
	// kindCommand is what to do, as documentation writes it: code ("`passwd -l user`", a code block), or a step
	// that tells the reader what to do ("Choose Tools - Line Numbering.").
	kindCommand
	// kindVerdict is a yes or a no, as documentation states one: a rule, a limit or a negation ("permitted only
	// in the SELECT list", "must have an alphabetic first character", "is not recommended for production").
	kindVerdict
	// kindPlace is where something is, as a site writes it: a file or directory path ("/etc/default/keyboard"),
	// a URL or an email address, or a street address or room ("260 Cesar Chavez Student Center").
	kindPlace
)

// Words that set a question's answer kind.
var (
	durationHow  = setOf("long", "fast", "soon", "quickly", "often", "frequently")
	sizeHow      = setOf("big", "large", "small", "heavy")
	sizeNouns    = setOf("size", "storage", "space", "disk", "memory", "ram", "length", "bandwidth", "quota")
	moneyNouns   = setOf("cost", "costs", "fee", "fees", "price", "tuition", "pay", "charge", "charged", "spend")
	timeUnits    = setOf("second", "seconds", "sec", "secs", "s", "ms", "minute", "minutes", "min", "mins", "hour", "hours", "hr", "hrs", "h", "day", "days", "d", "week", "weeks", "month", "months", "year", "years", "semester", "semesters", "fortnight")
	frequencies  = setOf("daily", "weekly", "monthly", "yearly", "annually", "nightly", "hourly", "every", "biweekly", "quarterly")
	sizeUnits    = setOf("b", "kb", "mb", "gb", "tb", "pb", "kib", "mib", "gib", "tib", "byte", "bytes", "bit", "bits", "kilobytes", "megabytes", "gigabytes", "terabytes", "characters", "chars", "k", "m", "g")
	moneyUnits   = setOf("dollars", "dollar", "usd", "eur", "euros", "euro", "chf", "francs", "gbp", "pounds", "cents")
	dateWords    = setOf("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "utc", "gmt", "am", "pm", "noon", "midnight")
	whatDate     = setOf("date", "day", "time", "year", "month", "deadline")
	definingCues = setOf("tell", "explain", "describe")
	numberNouns  = setOf("port", "ports", "number", "version", "value", "code", "section")
	steps        = setOf("choose", "click", "select", "press", "type", "open", "go", "enter", "run", "use", "right-click", "double-click", "drag", "set", "add", "install", "edit", "create")
	howTo        = setOf("do", "can", "to", "would", "should")
	commandNouns = setOf("command", "commands", "option", "options", "flag", "flags", "function", "setting", "parameter")
	// A clause opening with a modal asks yes or no ("can i use a window function in a WHERE clause?"), and the
	// site's answer to it is most often a rule or a limit; other yes-or-no questions ("does EXPLAIN ANALYZE
	// execute …?", "is there a mailing list …?") are answered by a plain statement or a name as often. A question
	// naming rules before any wh-word asks for them too ("are there any rules on what the database name can be?").
	verdictOpeners = setOf("can", "could", "should", "must", "may")
	auxiliaries    = setOf("is", "are", "was", "were", "do", "does", "did", "can", "could", "should", "would", "will", "shall", "may", "might", "must")
	wh             = setOf("what", "whats", "what's", "which", "where", "who", "when", "how", "why")
	ruleWords      = setOf("rule", "rules", "restriction", "restrictions", "restricted", "allowed", "permitted", "forbidden", "prohibited", "mandatory")
	// verdicts are the words a rule, a limit or a refusal is written with (a negation's contraction read without
	// its apostrophe, as the word reader gives it).
	verdicts = setOf("not", "no", "never", "cannot", "cant", "only", "must", "required", "allowed", "permitted", "prohibited", "forbidden", "recommended", "guaranteed", "unlimited", "limited", "restricted", "mandatory", "impossible",
		"doesnt", "dont", "isnt", "arent", "wont", "mustnt", "shouldnt")
)

// questionKind is the kind of answer question asks for, and the words of the question that only ask for it
// ("long" in "how long", "tell" in "tell me about"): they are not words an answer repeats.
func questionKind(question string) (answerKind, []string) {
	words := questionWords(question)
	var ask askedKind
	set := ask.set
	where := false // "where" asks for a place, unless the question asks for something more precise too
	for i, w := range words {
		next := ""
		if i+1 < len(words) {
			next = words[i+1]
		}
		switch {
		case definingCues[w] && i == 0:
			ask.cues = append(ask.cues, w)
		case w == "who" || w == "whom" || w == "who's" || w == "whos":
			set(kindPerson)
		case w == "when" && quantityWhen[next]:
			set(kindDate)
		case (w == "what" || w == "which" || w == "whats" || w == "what's") && whatDate[next]:
			set(kindDate)
		case w == "how" && durationHow[next]:
			set(kindDuration, next)
		case w == "how" && sizeHow[next]:
			set(kindSize, next)
		case w == "how" && next == "much":
			k := kindNumber
			for _, x := range words[i+2:] {
				if moneyNouns[x] {
					k = kindMoney
				} else if sizeNouns[x] {
					k = kindSize
				}
			}
			set(k)
		case w == "how" && next == "many" && i+2 < len(words) && timeUnits[words[i+2]]:
			set(kindDuration)
		case w == "how" && next == "many" || quantityWords[w]:
			set(kindNumber)
		case sizeNouns[w] && i > 0 && (asked(words[:i]) || quantityWords[words[i-1]]):
			set(kindSize)
		case numberNouns[w] && (askedFor(words, i) || w == "port" || w == "ports"):
			set(kindNumber)
		case w == "how" && howTo[next]:
			set(kindCommand)
		case (w == "way" || w == "ways") && next == "to":
			set(kindCommand, w) // "whats the fastest way to bulk load", "is there a way to turn it into a .deb
		case (w == "where" && (auxiliaries[next] || next == "to")) || w == "where's" || w == "wheres":
			where = true // "where is", "where to report"; not "a WHERE clause", "the point where"
		case commandNouns[w] && askedFor(words, i):
			set(kindCommand)
		}
	}
	if ask.kind == kindNone && where {
		ask.kind = kindPlace
	}
	if ask.kind == kindNone && asksVerdict(question) {
		ask.kind = kindVerdict
	}
	return ask.kind, ask.cues
}

// asksVerdict reports whether question asks for a yes or a no: one of its clauses opens with a modal and does
// not ask whether something exists, or it names rules before any wh-word.
func asksVerdict(question string) bool {
	for clause := range strings.FieldsFuncSeq(question, func(r rune) bool { return strings.ContainsRune(".,;:?!", r) }) {
		words := questionWords(clause)
		if len(words) > 1 && verdictOpeners[words[0]] && words[1] != "there" {
			return true
		}
		for _, w := range words {
			if wh[w] {
				break // "which PAM file sets the rules …" asks for the file
			}
			if ruleWords[w] {
				return true
			}
		}
	}
	return false
}

// askedKind is the kind a question asks for as its phrases are read in turn, and the words that only ask.
type askedKind struct {
	kind answerKind
	cues []string
}

// set records that a phrase asks for kind k, its words cue: the first kind other than a number wins (a number is
// what many phrases ask for besides something more precise: "how many days" is a duration).
func (a *askedKind) set(k answerKind, cue ...string) {
	if a.kind == kindNone || a.kind == kindNumber && k != kindNumber {
		a.kind = k
	}
	a.cues = append(a.cues, cue...)
}

// imperativeEndings are the endings of the imperative a help writes its steps in, where the language has one of
// its own, and the fewest letters such a verb has: French's "-ez" ("Choisissez"), Italian's polite plural
// ("Scegliete", "Premete", "Inserite"), Catalan's plural ("Trieu", "Premeu", "Obriu").
var imperativeEndings = map[string]struct {
	min     int
	endings []string
}{
	"fr": {5, []string{"ez"}},
	"it": {5, []string{"ate", "ete", "ite"}},
	"ca": {4, []string{"eu", "iu"}},
}

// imperative reports whether text, in the language lang, is a step of an instruction: it opens (after a list
// marker) with a verb that tells the reader what to do, the way help pages write a procedure. In English one of
// the verbs of steps ("Choose Tools - Line Numbering.", "Click OK."); in German an infinitive and the polite
// "Sie" ("Wählen Sie Extras – Zeilennummerierung.", not "Wenn Sie …"); in French a verb in the imperative's "-ez" ("Choisissez Outils -
// Numérotation des lignes."); in Dutch and the Scandinavian languages one of their verbs of steps (stepVerbs).
func imperative(text, lang string) bool {
	t := strings.TrimLeft(text, "-*+0123456789.) ")
	first, rest, _ := strings.Cut(t, " ")
	first = strings.ToLower(strings.Trim(first, "*_"))
	switch lang {
	case "de":
		second, _, _ := strings.Cut(rest, " ")
		return second == "Sie" && (strings.HasSuffix(first, "en") || strings.HasSuffix(first, "ern") || strings.HasSuffix(first, "eln"))
	}
	if e, ok := imperativeEndings[lang]; ok {
		return utf8.RuneCountInString(first) >= e.min && slices.ContainsFunc(e.endings, func(end string) bool {
			return strings.HasSuffix(first, end)
		})
	}
	if verbs, ok := stepVerbs[lang]; ok {
		return verbs[first]
	}
	return steps[first]
}

// questionKindIn is questionKind for a question in the language lang: the English wh-phrases, or those of the
// languages of kindLanguages ("wie lange", "¿cuántos años?", "сколько лет"; the how-to question "Wie kann ich …",
// "Comment …", which asks for a command or the steps of a procedure).
func questionKindIn(lang, question string) (answerKind, []string) {
	if kind, cues, ok := kindOf(textnorm.LanguageOf(lang), question); ok {
		return kind, cues
	}
	return questionKind(question)
}

// askedFor reports whether words[i] is what the question's wh-word asks for, the wh-word one or two words before
// it: "port" in "which port", "code" in "what exit code", "command" in "what's the command".
func askedFor(words []string, i int) bool {
	for j := max(0, i-2); j < i; j++ {
		switch words[j] {
		case "what", "which", "whats", "what's":
			return true
		}
	}
	return false
}

// asked reports whether words hold "what" or "which": the question asks for something it names after them.
func asked(words []string) bool {
	for _, w := range words {
		if w == "what" || w == "which" || w == "whats" || w == "what's" {
			return true
		}
	}
	return false
}

// withoutWords is question without the words of drop (as questionWords reads them).
func withoutWords(question string, drop []string) string {
	if len(drop) == 0 {
		return question
	}
	var b strings.Builder
	for _, f := range strings.Fields(question) {
		if !slices.Contains(drop, questionWord(f)) {
			b.WriteString(f)
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// unitReach is how many words a unit may follow its number by: "eight or more characters".
const unitReach = 3

// holdsKind reports whether text states an answer of the kind q asks for.
func (q *evidenceQuery) holdsKind(text string) bool {
	found := false
	lang := "en" // the question's language, which the steps of a procedure are read in
	if q.lang != nil {
		lang = q.lang.Tag()
	}
	q.buf, found = holdsKind(q.buf, text, q.kind, lang)
	return found
}

// holdsKind reports whether text, in the language lang, states an answer of kind k, reading its words into buf,
// which it returns for reuse.
func holdsKind(buf []byte, text string, k answerKind, lang string) ([]byte, bool) {
	switch k {
	case kindNone:
		return buf, false
	case kindPlace:
		return buf, statesPlace(text)
	case kindPerson:
		return buf, roleLabel(text)
	case kindCommand:
		return buf, strings.Contains(text, "`") || imperative(text, lang)
	case kindVerdict:
		found := false
		buf = textnorm.AppendWords(buf, text, func(w []byte) bool {
			found = verdicts[string(w)]
			return !found
		})
		return buf, found
	}
	if k == kindMoney && strings.ContainsAny(text, "$€£¥₽") {
		return buf, true
	}
	if c := cjkKindLanguages[textnorm.Base(lang)]; c != nil {
		return buf, holdsKindCJK(text, k, c)
	}
	// A language of kindLanguages writes its own frequencies, dates, numbers as words, and time and size units, the
	// units matched by stem (only after a number, which keeps the stemmer off most words); every language writes
	// digits, "GB" and "72h".
	freqs, dates := frequencies, dateWords
	var l *textnorm.Language
	var sets *kindSets
	if kl := kindLanguages[lang]; kl != nil {
		l = textnorm.LanguageOf(lang)
		sets = kl.sets(l)
		freqs, dates = sets.frequencies, sets.dateWords
	}
	stemIn := func(units map[string]bool, w []byte) bool { return units[l.Stem(string(w))] }
	var prev []byte
	sinceNumber, found := unitReach+1, false // words since the last number
	buf = textnorm.AppendWords(buf, text, func(w []byte) bool {
		number := statesNumber(w) || sets != nil && sets.numberWords[string(w)]
		prevNumber := sinceNumber <= unitReach
		switch k {
		case kindNumber:
			found = number
		case kindDuration:
			found = prevNumber && (timeUnits[string(w)] || sets != nil && stemIn(sets.timeUnits, w)) || freqs[string(w)] ||
				number && unitSuffix(w, timeUnits)
		case kindSize:
			found = prevNumber && (sizeUnits[string(w)] || sets != nil && stemIn(sets.sizeUnits, w)) ||
				number && unitSuffix(w, sizeUnits)
		case kindMoney:
			found = prevNumber && moneyUnits[string(w)]
		case kindDate:
			found = dates[string(w)] || year(w) || len(prev) > 0 && number && clock(prev, w)
		}
		prev = append(prev[:0], w...)
		if sinceNumber++; number {
			sinceNumber = 1
		}
		return !found
	})
	return buf, found
}

// unitSuffix reports whether a word is a number with a unit of units written onto it ("72h", "5min", "40gb").
func unitSuffix(w []byte, units map[string]bool) bool {
	i := 0
	for i < len(w) && ('0' <= w[i] && w[i] <= '9' || w[i] == '.') {
		i++
	}
	return i > 0 && i < len(w) && units[string(w[i:])]
}

// year reports whether w is a year of the last two centuries or the next ("1991", "2016").
func year(w []byte) bool {
	return len(w) == 4 && (w[0] == '1' && w[1] == '9' || w[0] == '2' && w[1] == '0') && allDigits(w)
}

// clock reports whether two words read as a time of day: "14 30" (from "14:30") or "0200 utc".
func clock(prev, w []byte) bool {
	return allDigits(prev) && allDigits(w) && len(prev) <= 2 && len(w) == 2
}

func allDigits(w []byte) bool {
	for _, c := range w {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(w) > 0
}

// roleLabel reports whether text names a person under a label: "Instructor: Zucman", "**Chair:** Shachar
// Kariv", or a label unit's value ("Shachar Kariv" under "Department Chair", which score reads with its heading
// on a line of its own): one to four capitalised words after a short label, no digits.
func roleLabel(text string) bool {
	text = strings.ReplaceAll(markdown.StripLinks(text), "*", "")
	label, value, ok := strings.Cut(text, ":")
	if !ok {
		label, value, ok = strings.Cut(text, "\n")
	}
	if !ok || utf8.RuneCountInString(label) > evidenceLabelRunes/2 || strings.ContainsAny(value, ":/|") {
		return false
	}
	names := strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == ';' || r == '&' })
	if len(names) == 0 || len(names) > 4 {
		return false
	}
	for _, name := range names {
		words := strings.Fields(name)
		if len(words) == 0 || len(words) > 4 {
			return false
		}
		for _, w := range words {
			r, _ := utf8.DecodeRuneInString(w)
			if !unicode.IsUpper(r) || strings.IndexFunc(w, unicode.IsDigit) >= 0 {
				return false
			}
		}
	}
	return true
}

// statesPlace reports whether text states where something is (kindPlace): a path ("/etc/default/keyboard",
// "~/.bashrc", "debian/control.in"), a URL or an email address, or a street address or room (a number, then within
// four words one of placeNouns). A link's target is not what a text states; its text is.
func statesPlace(text string) bool {
	if !strings.ContainsAny(text, "/@\\") && !strings.ContainsFunc(text, unicode.IsDigit) {
		return false
	}
	sinceNumber := 4 // words since the last number
	for _, w := range strings.Fields(withoutTargets(text)) {
		t := strings.Trim(w, "\"'`()[]<>{},;:.!?*“”„«»「」『』（）、。")
		switch {
		case t == "":
		case strings.Contains(t, "://") || isEmail(t) || isPath(t):
			return true
		case sinceNumber <= 3 && placeNouns[strings.ToLower(t)]:
			return true
		}
		if statesNumber([]byte(t)) {
			sinceNumber = 0
		} else {
			sinceNumber++
		}
	}
	return false
}

// placeNouns end a street address or name a room ("Sproul Hall", "Student Center", "Room 120").
var placeNouns = setOf("hall", "center", "centre", "building", "street", "st", "avenue", "ave", "road", "rd", "room", "floor", "suite", "boulevard", "blvd")

// isPath reports whether word is a file or directory path: absolute ("/etc/skel/", "~/.ssh", "C:\Users"), or
// relative with two slashes or a file name after one ("debian/control.in"; not "and/or", "TCP/IP").
func isPath(w string) bool {
	if len(w) > 3 && (w[1] == ':' && w[2] == '\\') {
		return true
	}
	rest, abs := strings.CutPrefix(w, "~/")
	if !abs {
		rest, abs = strings.CutPrefix(w, "./")
	}
	if !abs {
		rest, abs = strings.CutPrefix(w, "/")
	}
	if abs {
		return strings.ContainsFunc(rest, unicode.IsLetter)
	}
	i := strings.LastIndexByte(w, '/')
	if i <= 0 || !unicode.IsLetter(rune(w[0])) {
		return false
	}
	return strings.Count(w, "/") >= 2 || strings.Contains(w[i:], ".")
}

// isEmail reports whether word is an email address ("root@infra.apache.org").
func isEmail(w string) bool {
	at := strings.IndexByte(w, '@')
	return at > 0 && strings.Contains(w[at+1:], ".") && !strings.HasPrefix(w[at+1:], ".")
}
