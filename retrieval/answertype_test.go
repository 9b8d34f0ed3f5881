package retrieval

import (
	"slices"
	"testing"
)

func TestQuestionKind(t *testing.T) {
	for _, c := range []struct {
		question string
		kind     answerKind
		cues     []string
	}{
		{"how long do u keep backups of infra machines?", kindDuration, []string{"long"}},
		{"we filed a blocker ticket, how fast will infra get back to us?", kindDuration, []string{"fast"}},
		{"how many days should we wait before pulling in new versions", kindDuration, nil},
		{"how much does it cost to replace my cal 1 card", kindMoney, nil},
		{"how much storage do we need for a full mirror", kindSize, nil},
		{"what key size should my new pgp key be", kindSize, nil},
		{"max size of a single text value?", kindSize, nil},
		{"how many units is the master of data science?", kindNumber, nil},
		{"default max_connections value?", kindNumber, nil},
		{"when does the infra roundtable happen", kindDate, nil},
		{"what time do you reboot project VMs", kindDate, nil},
		{"who teaches econ 133?", kindPerson, nil},
		{"tell me about the cognitive science major", kindNone, []string{"tell"}},
		{"when I push to main, does the site rebuild?", kindNone, nil},
		{"can i use a window function in a WHERE clause?", kindVerdict, nil},
		{"can we still use the apache cms to build our project site", kindVerdict, nil},
		{"going thru the tutorial with createdb.. are there any rules on what the database name can be?", kindVerdict, nil},
		{"adding a column to a 500gb table.. should i expect a rewrite?", kindVerdict, nil},
		{"is there a mailing list where debian users help each other?", kindNone, nil},
		{"which PAM file sets the rules for changing passwords?", kindNone, nil},
		{"does EXPLAIN ANALYZE actually execute my delete statement", kindNone, nil},
		{"how do i lock a users account temporarily w/o deleting anything", kindCommand, nil},
		{"how can I find which package ships a program", kindCommand, nil},
		{"which command lists the installed fonts", kindCommand, nil},
		{"whats the command to take an old version off the downloads site", kindCommand, nil},
		{"smtp port for sending mail as my apache address?", kindNumber, nil},
		{"what exit code should my archive_command script return?", kindNumber, nil},
		{"what manual section documents config file formats", kindNumber, nil},
		{"is the old version still supported?", kindNone, nil},
		{"where is the disabled students program located", kindPlace, nil},
		{"files i want every newly created user to get in their home dir, where do those go?", kindPlace, nil},
		{"where's the nginx config", kindPlace, nil},
		{"where to report a security issue in an apache project", kindPlace, nil},
		{"where do i see how many words my text has", kindNumber, nil},
		{"i'm transferring a lot of units, is there a point where i have to stop?", kindNone, nil},
		{"whats the name of the python style where you just try the thing", kindNone, nil},
	} {
		kind, cues := questionKind(c.question)
		if kind != c.kind || !slices.Equal(cues, c.cues) {
			t.Errorf("questionKind(%q) = %d %q, want %d %q", c.question, kind, cues, c.kind, c.cues)
		}
	}
}

func TestKindsInOtherLanguages(t *testing.T) {
	for _, c := range []struct {
		lang, question string
		kind           answerKind
	}{
		{"de", "Wie kann ich die Zeilen in meinem Dokument nummerieren?", kindCommand},
		{"de", "Wie füge ich eine Fußnote ein?", kindCommand},
		{"de", "Wo sehe ich, wie viele Wörter mein Text hat?", kindNumber}, // as "where do i see how many words"
		{"fr", "comment ajouter une note de bas de page ?", kindCommand},
		{"fr", "où voir combien de mots contient mon texte ?", kindNumber},
		{"en", "how do i add a footnote?", kindCommand},
		{"en", "whats the fastest way to bulk load ten million rows", kindCommand},
		{"en", "is there a way to turn an .rpm into a .deb?", kindCommand},
		// The other kinds, in each language's words, accents or none.
		{"de", "wie lange hält so ein Debian-Stable-Release?", kindDuration},
		{"de", "wie viele Jahre gibt es ungefähr Support?", kindDuration},
		{"de", "welchen Port muss ich öffnen?", kindNumber},
		{"de", "wann erscheint die nächste Version?", kindDate},
		{"fr", "combien de temps dure le support ?", kindDuration},
		{"fr", "combien coûte l'inscription ?", kindMoney},
		{"es", "¿cuántos años de soporte tiene una versión estable?", kindDuration},
		{"es", "cuantos discos pueden fallar", kindNumber},
		{"es", "¿qué puerto usa munin?", kindNumber},
		{"es", "¿quién mantiene el paquete?", kindPerson},
		{"it", "quanto tempo resta supportata una versione stabile?", kindDuration},
		{"it", "come installo un pacchetto?", kindCommand},
		{"pt", "com que frequência o cron roda?", kindDuration},
		{"pt", "qual o tamanho mínimo da partição?", kindSize},
		{"ru", "сколько лет поддерживается стабильная версия?", kindDuration},
		{"ru", "как долго хранятся журналы?", kindDuration},
		{"ru", "какой порт открыть для munin?", kindNumber},
		{"ru", "как узнать версию debian?", kindCommand},
		{"ru", "где лежат файлы html?", kindPlace},
		{"ja", "Debianの安定版は何年くらいサポートされますか？", kindDuration},
		{"ja", "muninはどのポートを使いますか？", kindNumber},
		{"ja", "ポートを開くにはどうしますか？", kindCommand},
		{"ja", "アーカイブはどこで設定しますか？", kindPlace},
		{"zh-cn", "Debian 稳定版支持多久？", kindDuration},
		{"zh-cn", "如何列出系统上安装的字体？", kindCommand},
		{"zh-cn", "RAID 6 最多可以坏几块硬盘？", kindNumber},
		// "Where", which a path, an address or a URL answers; a number asked for in the same question comes first.
		{"de", "Wo wird die Tastaturbelegung der Konsole gespeichert?", kindPlace},
		{"fr", "Où est enregistrée la disposition du clavier de la console ?", kindPlace},
		{"es", "¿dónde se guardan las reglas del cortafuegos?", kindPlace},
		{"it", "dove si configura il proxy di apt?", kindPlace},
		{"pt", "onde ficam os arquivos de log?", kindPlace},
		{"zh-cn", "GRUB 启动时使用的内核参数在哪里修改？", kindPlace},
		// Dutch and the Scandinavian languages; Norwegian's "hvor" asks for a place only when nothing else is asked.
		{"nl", "hoe voeg ik een voetnoot toe?", kindCommand},
		{"nl", "hoe lang wordt een stabiele versie ondersteund?", kindDuration},
		{"nl", "waar zie ik hoeveel woorden mijn tekst heeft?", kindNumber},
		{"sv", "hur numrerar jag raderna i mitt dokument?", kindCommand},
		{"sv", "efter hur många bokstäver erbjuder writer att komplettera ett ord?", kindNumber},
		{"sv", "hur länge stöds en stabil utgåva?", kindDuration},
		{"nb", "hvor mange år får en stable-utgave støtte?", kindDuration},
		{"nb", "hvor stilles tastaturoppsettet inn på debian?", kindPlace},
		{"nb", "hvilken tcp-port må jeg åpne?", kindNumber},
		{"da", "hvornår kommer den næste udgave?", kindDate},
		{"da", "hvordan tilføjer jeg en fodnote?", kindCommand},
		{"pl", "jak dodać przypis?", kindCommand},
		{"pl", "jak długo jest wspierana wersja stabilna?", kindDuration},
		{"pl", "ile lat jest wspierana wersja stabilna?", kindDuration},
		{"pl", "kiedy wychodzi nowa wersja?", kindDate},
	} {
		if kind, _ := questionKindIn(c.lang, c.question); kind != c.kind {
			t.Errorf("questionKindIn(%s, %q) = %d, want %d", c.lang, c.question, kind, c.kind)
		}
	}
	for _, c := range []struct {
		lang, text string
		want       bool
	}{
		{"de", "Wählen Sie Extras – Zeilennummerierung.", true},
		{"de", "2. Klicken Sie auf OK.", true},
		{"de", "Wenn Sie die Liste leer ist, klicken Sie auf Neu.", false},
		{"de", "Die Zeilennummern werden mit ausgedruckt.", false},
		{"fr", "Choisissez Outils - Numérotation des lignes.", true},
		{"fr", "Cliquez sur OK.", true},
		{"fr", "Les numéros de ligne sont imprimés avec le document.", false},
		{"en", "Choose Tools - Line Numbering.", true},
		{"en", "Wählen Sie Extras – Zeilennummerierung.", false},
		{"nl", "Kies Extra - Regelnummering.", true},
		{"nl", "2. Klik op OK.", true},
		{"nl", "Regelnummers zijn niet beschikbaar in HTML-opmaak.", false},
		{"sv", "Välj Verktyg - Radnumrering.", true},
		{"sv", "Tryck på Delete.", true},
		{"sv", "Radnummer skrivs ut med dokumentet.", false},
		{"no", "Velg Verktøy - Linjenummerering.", true},
		{"da", "Vælg Funktioner - Linjenummerering.", true},
		{"pl", "Wybierz Narzędzia - Numeracja wierszy.", true},
		{"pl", "Numeracja wierszy nie jest dostępna w formacie HTML.", false},
		{"es", "Seleccione Herramientas ▸ Numeración de renglones.", true},
		{"es", "3. Active la casilla Expresiones regulares.", true},
		{"es", "La numeración de renglones no está disponible en HTML.", false},
		{"pt", "Escolha Ferramentas - Numeração de linhas.", true},
		{"pt", "A numeração de linhas não está disponível em HTML.", false},
		{"it", "Scegliete Strumenti - Numerazione righe.", true},
		{"it", "2. Premete Backspace.", true},
		{"it", "Le righe numerate vengono stampate con il documento.", false},
		{"it", "Parte della pagina.", false},
		{"ca", "Trieu Eines ▸ Numeració de línies.", true},
		{"ca", "La numeració de línies no està disponible en HTML.", false},
	} {
		if got := imperative(c.text, c.lang); got != c.want {
			t.Errorf("imperative(%q, %s) = %v, want %v", c.text, c.lang, got, c.want)
		}
	}
}

func TestHoldsKind(t *testing.T) {
	for _, c := range []struct {
		text string
		kind answerKind
		want bool
	}{
		{"with a retention of approximately 14 days for fulls.", kindDuration, true},
		{"- **Goal**: 24 hours to respond, 3 days (72h) to resolve.", kindDuration, true},
		{"The default is five minutes (`5min`).", kindDuration, true},
		{"Backups are pruned weekly.", kindDuration, true},
		{"The mirror needs 2 servers.", kindDuration, false},
		{"You should have at least 150 GB of available disk space.", kindSize, true},
		{"keys should be at least **4096** bits.", kindSize, true},
		{"a 40Gb disk by default", kindSize, true},
		{"All passwords must have eight or more characters.", kindSize, true},
		{"Use 2 disks.", kindSize, false},
		{"The fee is $80.", kindMoney, true},
		{"about 25 dollars", kindMoney, true},
		{"25 units", kindMoney, false},
		{"Spring Recess | Monday, March 27, 2017", kindDate, true},
		{"reboots at 0200 UTC when necessary", kindDate, true},
		{"starts at 14:30", kindDate, true},
		{"It takes a while.", kindDate, false},
		{"The firewall rules are located in `/etc/nftables.conf`.", kindPlace, true},
		{"Put it in ~/.bashrc and log in again.", kindPlace, true},
		{"See debian/control.in for the template.", kindPlace, true},
		{"Send it to root@infra.apache.org, encrypted.", kindPlace, true},
		{"The office is at 260 Cesar Chavez Student Center.", kindPlace, true},
		{"設定は \"/etc/default/keyboard\" に保存されます。", kindPlace, true},
		{"Use TCP/IP and/or UDP, 1/2 of the time, as in release 15.5.", kindPlace, false},
		{"See [the policy](https://infra.example.org/policy.html) first.", kindPlace, false},
		{"**Instructor:** Zucman", kindPerson, true},
		{"**Department Chair**\nShachar Kariv", kindPerson, true},
		{"**Prerequisites:** Economics 100B", kindPerson, false},
		{"Note: please review the policy first.", kindPerson, false},
		{"The requirement was instituted in 1991.", kindNone, false},
		{"Window functions are permitted only in the SELECT list.", kindVerdict, true},
		{"Database names must have an alphabetic first character.", kindVerdict, true},
		{"The College of Chemistry doesn't accept spring admits.", kindVerdict, true},
		{"It is possible to use window functions without any WINDOW clause at all.", kindVerdict, false},
		{"This is accomplished by using the command `passwd -l user` (lock).", kindCommand, true},
		{"```\njournalctl -u ssh.service\n```", kindCommand, true},
		{"A disabled account means the user cannot login.", kindCommand, false},
		{"Choose Tools - Line Numbering.", kindCommand, true},
		{"2. Click **OK**.", kindCommand, true},
		{"Line numbers are included when you print.", kindCommand, false},
	} {
		if _, got := holdsKind(nil, c.text, c.kind, "en"); got != c.want {
			t.Errorf("holdsKind(%q, %d) = %v, want %v", c.text, c.kind, got, c.want)
		}
	}
	// Other languages' units in any inflection, numbers as words, months, and the units every language writes.
	for _, c := range []struct {
		lang, text string
		kind       answerKind
		want       bool
	}{
		{"de", "eine erwartete Lebensdauer von ca. 5 Jahren", kindDuration, true},
		{"de", "Die Sicherungen laufen täglich.", kindDuration, true},
		{"de", "Es gibt 5 Server.", kindDuration, false},
		{"fr", "une durée de vie d'environ 5 ans", kindDuration, true},
		{"es", "tiene una esperanza de vida de unos 5 años", kindDuration, true},
		{"es", "pueden fallar hasta dos discos", kindNumber, true},
		{"it", "ogni settimana", kindDuration, true},
		{"pt", "pelo menos 20 GB de espaço", kindSize, true},
		{"pt", "lançada em 14 de agosto", kindDate, true},
		{"ru", "имеет ожидаемое время жизни около 5 лет", kindDuration, true},
		{"ru", "в течение двух недель", kindDuration, true},
		{"ru", "выпускаются каждые 2 года", kindDuration, true},
		{"ru", "на 5 серверах", kindDuration, false},
		{"ru", "стоит 100 ₽", kindMoney, true},
		{"ja", "各安定版は約5年の寿命が期待されています。", kindDuration, true},
		{"ja", "バックアップは１４日間保存されます。", kindDuration, true},
		{"ja", "5台のサーバーがあります。", kindDuration, false},
		{"ja", "cronジョブは毎日実行されます。", kindDuration, true},
		{"zh", "每个稳定版的预期寿命约为 5 年。", kindDuration, true},
		{"zh", "至少需要 20 GB 的空间。", kindSize, true},
		{"zh", "端口 4949", kindNumber, true},
		{"zh", "没有数字。", kindNumber, false},
	} {
		if _, got := holdsKind(nil, c.text, c.kind, c.lang); got != c.want {
			t.Errorf("holdsKind(%q, %d, %s) = %v, want %v", c.text, c.kind, c.lang, got, c.want)
		}
	}
}

// A unit that states the kind of answer asked for is found though only its heading names the question's subject:
// "Goal: 24 hours to respond" under "Blocker" for "how fast do you answer a blocker ticket".
func TestEvidenceFindsTypedAnswerUnderItsHeading(t *testing.T) {
	text := "#### Blocker\n\nA time-sensitive issue that is hindering a project's basic functions.\n\n" +
		"- **Goal**: 24 hours to respond, 3 days (72h) to resolve.\n- **Example**: Web site has been defaced.\n"
	question := "we filed a blocker ticket, how fast will you get back to us?"
	kind, cues := questionKind(question)
	q := &evidenceQuery{passageQuery: newPassageQuery(withoutWords(question, cues), nil), kind: kind}
	var best Evidence
	for _, u := range evidenceUnits(text) {
		if e := q.score(u, 0, 0); e.Score > best.Score {
			best = e
		}
	}
	if best.Text != "- **Goal**: 24 hours to respond, 3 days (72h) to resolve." {
		t.Errorf("best unit %q (%.3f), want the goal", best.Text, best.Score)
	}
	q.kind = kindNone
	for _, u := range evidenceUnits(text) {
		if e := q.score(u, 0, 0); e.Text == best.Text && e.Score != 0 {
			t.Errorf("without its answer kind the goal, which holds no question word, scores %.3f", e.Score)
		}
	}
}

// The paragraph after a definition list's term or an API's signature takes the term's words as context.
func TestEvidenceUnitsTopic(t *testing.T) {
	text := "### 20.5.2. Checkpoints\n\nSome text first.\n\n`checkpoint_timeout` (`integer`)\n\n" +
		"Maximum time between automatic WAL checkpoints. The default is five minutes (`5min`).\n\n" +
		"A further paragraph on it.\n\n### Next\n\nUnrelated text here."
	topics := map[string]string{}
	for _, u := range evidenceUnits(text) {
		topics[u.text] = u.topic
	}
	for unit, want := range map[string]string{
		"Some text first.":                      "",
		"The default is five minutes (`5min`).": "`checkpoint_timeout` (`integer`)",
		"A further paragraph on it.":            "`checkpoint_timeout` (`integer`)",
		"Unrelated text here.":                  "",
	} {
		if got, ok := topics[unit]; !ok || got != want {
			t.Errorf("topic of %q = %q (found %v), want %q", unit, got, ok, want)
		}
	}
}

// A unit's next sentences start at the one that states the kind of answer asked for, when neither the unit nor
// the sentence right after it does; otherwise they are the paragraph's next sentences in order.
func TestEvidenceNextReachesTheKindAsked(t *testing.T) {
	text := "Sets the base maximum amount of memory to be used by a sort before writing to temporary files. " +
		"If this value is specified without units, it is taken as kilobytes. The default value is four megabytes (`4MB`). " +
		"Several sessions may sort at once."
	units := evidenceUnits(text)
	q := &evidenceQuery{passageQuery: newPassageQuery("how much memory can a sort use before writing temp files?", nil)}
	q.kind, _ = questionKind("how much memory can a sort use before writing temp files?")
	if q.kind != kindSize {
		t.Fatalf("kind %d, want a size", q.kind)
	}
	got := q.next(units, 0, units[0].text)
	want := []string{"… The default value is four megabytes (`4MB`).", "Several sessions may sort at once."}
	if !slices.Equal(got, want) {
		t.Errorf("next = %q, want %q", got, want)
	}
	q.kind = kindNone
	if got := q.next(units, 0, units[0].text); len(got) != 3 || got[0] != "If this value is specified without units, it is taken as kilobytes." {
		t.Errorf("next without an answer kind = %q, want the three next sentences in order", got)
	}
	if got := q.next(units, len(units)-1, units[len(units)-1].text); got != nil {
		t.Errorf("next of a paragraph's last sentence = %q", got)
	}
}
