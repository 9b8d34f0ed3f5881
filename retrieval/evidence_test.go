package retrieval

import (
	"context"
	"fmt"
	"github.com/ragproxy/ragproxy/index"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEvidenceUnits(t *testing.T) {
	text := "# Fees\n\n" +
		"Office hours\n\n" + // a short first line under a heading is a value the heading names
		"## Department Chair\n\nShachar Kariv\n\n" +
		"## Deadlines\n\n" +
		"The fee is due by Aug. 1 in most cases, e.g. for new students. Late payment costs $50! Ask Dr. Smith why.\n" +
		"A second line of the same paragraph.\n\n" +
		"- first item of a list\n  that runs on\n- second item of the list\n\n" +
		"| Term | Fee |\n|---|---|\n| Fall term | $4,850 |\n| Spring term | $4,900 |\n\n" +
		"```\nfee --pay now\n```\n"
	var got []evidenceUnit
	for _, u := range evidenceUnits(text) {
		got = append(got, u)
	}
	want := []evidenceUnit{
		{text: "Office hours", heading: "Fees", label: true},
		{text: "Shachar Kariv", heading: "Department Chair", label: true},
		{text: "The fee is due by Aug. 1 in most cases, e.g. for new students.", heading: "Deadlines", para: 1},
		{text: "Late payment costs $50!", heading: "Deadlines", para: 1},
		{text: "Ask Dr. Smith why.", heading: "Deadlines", para: 1},
		{text: "A second line of the same paragraph.", heading: "Deadlines", para: 1},
		{text: "- first item of a list that runs on", heading: "Deadlines"},
		{text: "- second item of the list", heading: "Deadlines"},
		{text: "| Fall term | $4,850 |", heading: "Deadlines", header: "| Term | Fee |"},
		{text: "| Spring term | $4,900 |", heading: "Deadlines", header: "| Term | Fee |"},
		{text: "```\nfee --pay now\n```", heading: "Deadlines"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(evidenceUnit{})); diff != "" {
		t.Errorf("evidenceUnits (-want +got):\n%s", diff)
	}
}

func TestSentences(t *testing.T) {
	for p, want := range map[string][]string{
		"APT は sources.list を読みます。設定は /etc/apt にあります！本当？はい。": {"APT は sources.list を読みます。", "設定は /etc/apt にあります！", "本当？", "はい。"},
		"Fees are due. Ask Dr. Smith why.": {"Fees are due.", "Ask Dr. Smith why."},
		"在这里。":                             {"在这里。"},
		// A period inside bold text (a caption's number) ends no sentence; "**" in code is no bold.
		"**Example 10.12. Excerpt of `/etc/bind/named.conf.local`**": {"**Example 10.12. Excerpt of `/etc/bind/named.conf.local`**"},
		"All return `4**2`, i.e. `16`. You can verify this.":         {"All return `4**2`, i.e. `16`.", "You can verify this."},
		// Nor does one in a link's text or a code span.
		"See [E.5.1. Migration to Version 15.5](https://x.example/r.html). It lists changes.": {
			"See [E.5.1. Migration to Version 15.5](https://x.example/r.html).", "It lists changes."},
		"Run `make. Then` now. Done.": {"Run `make. Then` now.", "Done."},
	} {
		if got := sentences(p); !slices.Equal(got, want) {
			t.Errorf("sentences(%q) = %q, want %q", p, got, want)
		}
	}
}

func TestEvidenceScore(t *testing.T) {
	q := &evidenceQuery{passageQuery: newPassageQuery("how many units is the data science master?", nil)}
	title := q.mask("Data Science")
	near := q.score(evidenceUnit{text: "You will complete 27 units of course work.", heading: "Unit Requirements"}, title, 0)
	far := q.score(evidenceUnit{text: "The units of this programme are spread out across terms of study and finish within 20 months.", heading: "Unit Requirements"}, title, 0)
	none := q.score(evidenceUnit{text: "Apply by the deadline in spring.", heading: "Data Science units"}, title, 0)
	if near.Score <= far.Score {
		t.Errorf("a quantity beside the asked word (%.3f) does not beat one far from it (%.3f)", near.Score, far.Score)
	}
	if none.Score != 0 {
		t.Errorf("a unit holding none of the question's words scores %.3f", none.Score)
	}
	if near.Own == 0 || near.Cover <= near.Own*float64(q.n)/float64(q.n+1) {
		t.Errorf("near: cover %.3f own %.3f: the title's terms should add to the cover", near.Cover, near.Own)
	}
	row := q.score(evidenceUnit{text: "| Data Science | 27 |", header: "| Programme | Units |"}, 0, 0)
	if want := "| Programme | Units |\n| --- | --- |\n| Data Science | 27 |"; row.Text != want {
		t.Errorf("row text = %q, want %q", row.Text, want)
	}
	for _, m := range row.Matched {
		if w := row.Text[m[0]:m[1]]; w != "Data" && w != "Science" && w != "27" {
			t.Errorf("matched range %v is %q, not a question word or quantity of the row", m, w)
		}
	}
}

func TestEvidenceNextLeadsIntoItsBlock(t *testing.T) {
	units := evidenceUnits("## Launcher\n\nSeveral versions can be installed. To launch Python 3.7, try the command:\n\n" +
		"```\npy -3.7\n```\n\nThe options are:\n\n- `-v` prints more\n- `-q` prints less\n\nMore text.\n\n" +
		"It ends on a colon:\n\n## Next section\n\n- an item of another section\n\n" +
		"**Example 10.12. Excerpt of `named.conf.local`**\n\n```\nzone \"falcot.com\" {\n```\n")
	q := &evidenceQuery{passageQuery: newPassageQuery("how do i start python 3.7", nil)}
	find := func(text string) int {
		i := slices.IndexFunc(units, func(u evidenceUnit) bool { return u.text == text })
		if i < 0 {
			t.Fatalf("no unit %q in %+v", text, units)
		}
		return i
	}
	for text, want := range map[string][]string{
		"To launch Python 3.7, try the command:": {"```\npy -3.7\n```"},
		"The options are:":                       {"- `-v` prints more", "- `-q` prints less"},
		"Several versions can be installed.":     {"To launch Python 3.7, try the command:"},
		"It ends on a colon:":                    nil, // what follows is another section's
		// A caption (bold alone, its number's period no sentence's end) leads into its example too.
		"**Example 10.12. Excerpt of `named.conf.local`**": {"```\nzone \"falcot.com\" {\n```"},
	} {
		k := find(text)
		if got := q.next(units, k, text); !slices.Equal(got, want) {
			t.Errorf("next(%q) = %q, want %q", text, got, want)
		}
	}
}

// A step of a procedure is quoted with the steps after it in its list; an item of a bulleted list is not.
func TestEvidenceStepLeadsIntoTheRestOfItsProcedure(t *testing.T) {
	units := evidenceUnits("## To insert a table of contents\n\n1. Click where you want the table of contents.\n" +
		"2. Choose Insert - Table of Contents and Index.\n3. Click OK.\n\nThe table is updated on demand.\n\n" +
		"## Updating\n\n1. Choose Tools - Update.\n\n## Kinds\n\n- Contents\n- Index\n")
	find := func(prefix string) int {
		i := slices.IndexFunc(units, func(u evidenceUnit) bool { return strings.HasPrefix(u.text, prefix) })
		if i < 0 {
			t.Fatalf("no unit %q in %+v", prefix, units)
		}
		return i
	}
	q := &evidenceQuery{passageQuery: newPassageQuery("how do i insert a table of contents", nil)}
	for _, c := range []struct {
		unit string
		want []string
	}{
		{"1. Click", []string{"2. Choose Insert - Table of Contents and Index.", "3. Click OK."}},
		{"3. Click", nil},        // the last step
		{"1. Choose Tools", nil}, // another section's procedure does not run on
		{"- Contents", nil},      // a bulleted list is no procedure
	} {
		k := find(c.unit)
		if got := q.next(units, k, units[k].text); !slices.Equal(got, c.want) {
			t.Errorf("next(%q) = %q, want %q", c.unit, got, c.want)
		}
	}
}

// A code block scores half, as an example of what a sentence says, unless the question asks for a command.
func TestEvidenceCodeAnswersACommandQuestion(t *testing.T) {
	block := evidenceUnit{text: "```\njournalctl -u ssh.service\n```", heading: "Logs of the ssh service"}
	question := "how do i view the logs of the ssh service"
	kind, cues := questionKind(question)
	if kind != kindCommand {
		t.Fatalf("questionKind(%q) = %d, want kindCommand", question, kind)
	}
	asked := &evidenceQuery{passageQuery: newPassageQuery(withoutWords(question, cues), nil), kind: kind}
	other := &evidenceQuery{passageQuery: newPassageQuery(withoutWords(question, cues), nil)}
	a, o := asked.score(block, 0, 0), other.score(block, 0, 0)
	if o.Score == 0 || a.Score < 3*o.Score { // typed (×2) and not halved: four times
		t.Errorf("code block for a command question scores %.3f, for another question %.3f: want it not halved and typed", a.Score, o.Score)
	}
}

// For "tell me about X", the sentence that opens X's page counts as a definition does.
func TestEvidenceOpeningSentenceAnswersTellMeAbout(t *testing.T) {
	units := evidenceUnits("# Cognitive Science\n\n## About the Program\n\nCognitive Science is the cross-disciplinary study of human " +
		"cognition. It draws on six fields.\n\nStudents take a seminar.\n")
	if !opensPage("# Cognitive Science\n\n", units, 0) {
		t.Errorf("the page's first sentence does not open it: %+v", units[0])
	}
	if opensPage("# Cognitive Science\n\n", units, 1) || opensPage("# Cognitive Science\n\n", units, 2) {
		t.Error("a later sentence opens the page")
	}
	if opensPage("## About the Program\n\n", units, 0) {
		t.Error("a passage from the middle of a page opens it")
	}
}

// A unit holds the words it shows, not those of the URLs it links to.
func TestEvidenceIgnoresLinkTargets(t *testing.T) {
	q := &evidenceQuery{passageQuery: newPassageQuery("who is danny angus", nil)}
	link := evidenceUnit{text: "- [Continue Reading](https://infra.example.org/blog/Danny_Angus_Infra_VP.html)"}
	if e := q.score(link, 0, 0); e.Score != 0 {
		t.Errorf("a link named for its target scores %.3f", e.Score)
	}
	named := evidenceUnit{text: "We spoke with [Danny Angus](https://infra.example.org/blog/vp.html), VP since 2025."}
	if e := q.score(named, 0, 0); e.Own != 1 || len(e.Matched) != 2 {
		t.Errorf("a link's text: own %.2f, matched %v; want both words", e.Own, e.Matched)
	}
	if got := withoutTargets(named.text); len(got) != len(named.text) || strings.Contains(got, "vp.html") || !strings.Contains(got, "[Danny Angus]") {
		t.Errorf("withoutTargets = %q", got)
	}
}

// A blockquote's lines read as their text: a table the page indents is a table, its rows read with its header,
// and a quoted fence is code.
func TestEvidenceUnitsInBlockquotes(t *testing.T) {
	units := evidenceUnits("## Align\n\n> | Option | Meaning |\n> |---|---|\n> | `'<'` | Left-aligned. It is the default. |\n" +
		"> | `'^'` | Centered. |\n\n> > Nested note. Second sentence.\n\n> ```\n> x = 1\n> ```\n")
	want := []evidenceUnit{
		{text: "| `'<'` | Left-aligned. It is the default. |", heading: "Align", header: "| Option | Meaning |"},
		{text: "| `'^'` | Centered. |", heading: "Align", header: "| Option | Meaning |"},
		{text: "Nested note.", heading: "Align", para: 1},
		{text: "Second sentence.", heading: "Align", para: 1},
		{text: "```\nx = 1\n```", heading: "Align"},
	}
	if diff := cmp.Diff(want, units, cmp.AllowUnexported(evidenceUnit{})); diff != "" {
		t.Errorf("evidenceUnits (-want +got):\n%s", diff)
	}
}

// A unit that is only a link (a table of contents' item) scores half what the same words state in a sentence.
func TestEvidenceLinkOnly(t *testing.T) {
	q := &evidenceQuery{passageQuery: newPassageQuery("what changed in release 15.5", nil)}
	toc := q.score(evidenceUnit{text: "- [E.16. Release 15.5](https://x.example/release-15-5.html)"}, 0, 0)
	said := q.score(evidenceUnit{text: "- E.16. Release 15.5"}, 0, 0)
	if said.Score == 0 || toc.Score != said.Score*evidenceLink {
		t.Errorf("link only %.3f, the same words %.3f", toc.Score, said.Score)
	}
	for text, want := range map[string]bool{
		"[E.16. Release 15.5](https://x.example/r.html)":        true,
		"- [Continue Reading](https://x.example/r.html)":        true,
		"See [E.16](https://x.example/r.html) for the changes.": false,
		"[a](https://x.example/a) and [b](https://x.example/b)": false,
	} {
		if got := onlyLink(text); got != want {
			t.Errorf("onlyLink(%q) = %v, want %v", text, got, want)
		}
	}
}

// A follow-up's own words weigh more than those only the question it continues holds: after "how much is in-state
// tuition?", "what about parking permits?" is answered by the permits' price, not by the tuition row that the two
// questions' words cover as much.
func TestEvidenceFollowUpWeighsItsOwnWords(t *testing.T) {
	q := &evidenceQuery{passageQuery: newPassageQuery("how much is in-state tuition? what about parking permits?", nil)}
	row := evidenceUnit{text: "| In-state | $4,850 |", header: "| Residency | Tuition |"}
	permits := evidenceUnit{text: "Student parking permits cost $180 per year."}
	if a, b := q.score(row, 0, 0), q.score(permits, 0, 0); a.Score != b.Score {
		t.Fatalf("the test needs the two units level without the turn: %.3f and %.3f", a.Score, b.Score)
	}
	q.weighTurn("what about parking permits?")
	if a, b := q.score(row, 0, 0), q.score(permits, 0, 0); b.Score <= a.Score || b.Own <= a.Own {
		t.Errorf("the follow-up's words do not weigh more: tuition row %.3f (own %.2f), permits %.3f (own %.2f)", a.Score, a.Own, b.Score, b.Own)
	}
}

func TestShapes(t *testing.T) {
	funcs := map[string]func(lang, text string) bool{
		"asksDefault": asksDefault, "statesDefault": statesDefault, "asksBound": asksBound, "statesBound": statesBound,
	}
	for _, c := range []struct {
		fn, lang, text string
		want           bool
	}{
		{"asksDefault", "en", "checkpoint_timeout default", true},
		{"asksDefault", "en", "how many significant digits does the decimal module use out of the box", true},
		{"asksDefault", "en", "nfs export: if i dont specify rw or ro in /etc/exports, can clients write?", true},
		{"asksDefault", "en", "if i just put @lru_cache on a function with no arguments to the decorator how many results does it keep", true},
		{"asksDefault", "en", "pg_ctl stop without -m, which shutdown mode does it use", true},
		{"asksDefault", "en", "can i run it without root?", false},
		{"asksDefault", "en", "how do i specify rw in /etc/exports?", false},
		{"asksDefault", "en", "what does /etc/default/keyboard hold?", false}, // a path names no default
		{"asksDefault", "de", "welche Standardpriorität vergibt APT?", true},
		{"asksDefault", "fr", "quelle priorité par défaut apt donne ?", true},
		{"asksDefault", "fr", "quel est le défaut de ce disque ?", false},
		{"asksDefault", "es", "¿qué prioridad da apt por defecto?", true},
		{"asksDefault", "ru", "какой приоритет apt по умолчанию?", true},
		{"asksDefault", "ja", "APTがつけるデフォルトの優先度っていくつ？", true},
		{"asksDefault", "de", "wie lange dauert die Installation?", false},
		{"asksDefault", "de", "Welchen Port nimmt approx ohne Angabe?", true},
		{"asksDefault", "fr", "quel port approx utilise sans rien préciser ?", true},
		{"asksDefault", "ru", "какой порт у approx из коробки?", true},
		{"asksDefault", "ja", "ポートを指定しないと何番になりますか？", true},
		{"statesDefault", "en", "The default value is four megabytes (`4MB`).", true},
		{"statesDefault", "en", "Round to *places* decimal places (default 7).", true},
		{"statesDefault", "en", "If *mode* is omitted, it defaults to `'r'`.", true},
		{"statesDefault", "en", "Edit `/etc/default/keyboard` and `default_transaction_isolation`.", false},
		{"statesDefault", "en", "The standard library is large.", false},
		{"statesDefault", "de", "Standardmäßig lauscht approx auf Port 9999.", true},
		{"statesDefault", "fr", "Les répertoires sont exportés en lecture seule par défaut.", true},
		{"statesDefault", "pt", "O valor padrão é 500.", true},
		{"statesDefault", "zh-cn", "默认情况下只读。", true},
		{"statesDefault", "it", "Il valore predefinito è 500.", true},
		{"asksBound", "en", "whats the shortest password i can set for my apache account", true},
		{"asksBound", "en", "max number of parallel jobs allowed in one github actions workflow", true},
		{"asksBound", "en", "how many columns can i put into one index max", true},
		{"asksBound", "en", "is there a weekly limit on how many gha minutes one project can burn", true},
		{"asksBound", "en", "how do i rename my local branch", false},
		{"asksBound", "de", "Wie groß darf eine Datei höchstens sein?", true},
		{"asksBound", "fr", "quelle est la taille maximale d'un fichier ?", true},
		{"asksBound", "ja", "ファイルの最大サイズは？", true},
		{"asksBound", "ja", "以下のファイルは何ですか？", false}, // "the following"
		{"asksBound", "de", "Wie benenne ich einen Zweig um?", false},
		{"statesBound", "en", "You should have at least 150 GB of available disk space.", true},
		{"statesBound", "en", "An index can have up to 32 columns.", true},
		{"statesBound", "en", "There is a limit of **two seats per PMC**.", true},
		{"statesBound", "en", "Identifiers are unlimited in length.", true},
		{"statesBound", "en", "Use `git branch -m` to rename a branch.", false},
		{"statesBound", "de", "Schlüssel sollten mindestens 4096 Bit lang sein.", true},
		{"statesBound", "ru", "не более 20 заданий", true},
		{"statesBound", "zh-cn", "密钥至少 4096 位。", true},
	} {
		if got := funcs[c.fn](c.lang, c.text); got != c.want {
			t.Errorf("%s(%s, %q) = %v, want %v", c.fn, c.lang, c.text, got, c.want)
		}
	}
}

// Reading the passages best first and stopping where no unit can place changes nothing: the best few units are
// those of a full reading.
func TestEvidenceStopsWhereNoUnitCanPlace(t *testing.T) {
	site := newTestSite(t)
	for i := range 6 {
		site.addPage(fmt.Sprintf("Widget guide %d", i), []string{fmt.Sprintf("## Widgets\n\nWidget credits %s. Students complete %d widget credits. %s.",
			filler(i, 8), 20+i, filler(i+2, 12)), fmt.Sprintf("## Other\n\n%s. Widget %s.", filler(i+4, 20), filler(i+5, 6))})
	}
	r := site.retriever(t, Config{NoWordNet: true})
	res, err := r.Retrieve(context.Background(), "how many widget credits do students complete?", nil)
	if err != nil {
		t.Fatal(err)
	}
	all := r.Evidence(res, 1000)
	if len(all) < 8 {
		t.Fatalf("%d units, want the test's passages to give at least 8", len(all))
	}
	for _, n := range []int{1, 3, 5} {
		got := r.Evidence(res, n)
		for i := range got {
			if got[i].Text != all[i].Text || got[i].Score != all[i].Score || got[i].Chunk != all[i].Chunk {
				t.Errorf("Evidence(res, %d)[%d] = %q (%.4f), a full reading has %q (%.4f)", n, i, got[i].Text, got[i].Score, all[i].Text, all[i].Score)
			}
		}
	}
}

func TestMinScores(t *testing.T) {
	var h minScores
	for _, s := range []float64{0.5, 0.1, 0.9, 0.3, 0.7, 0.2, 0.8} {
		h.add(s, 3)
	}
	if len(h) != 3 || h[0] != 0.7 {
		t.Errorf("the best three of seven: root %.1f of %v, want 0.7 of three", h[0], h)
	}
}

// TestEvidenceAnchor checks that a unit carries the id of its page's section, by the heading it stands under.
func TestEvidenceAnchor(t *testing.T) {
	site := newTestSite(t)
	site.addPage("Fees", []string{"## Late fees\n\nThe late filing fee is eighty dollars for every form filed after the deadline.\n\n## Refunds\n\nRefunds of the late filing fee take two weeks from the day the office receives the request."})
	// A passage that starts within a section (its heading in the passage before) is in that section.
	site.addPage("Calendar", []string{"## Deadlines\n\nThe filing deadline is in May.",
		"Late filing after the deadline costs a fee that the calendar office sets each spring."})
	site.ix.Pages[0].Anchors = []index.Anchor{{Heading: "Late fees", ID: "late-fees"}}
	site.ix.Pages[1].Anchors = []index.Anchor{{Heading: "Deadlines", ID: "deadlines"}}
	r := site.retriever(t, Config{NoWordNet: true})
	res, err := r.Retrieve(context.Background(), "how much is the late filing fee?", nil)
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]string{}
	for _, e := range r.Evidence(res, 10) {
		anchors[e.Text] = e.Anchor
	}
	for text, want := range map[string]string{"The late filing fee is eighty dollars for every form filed after the deadline.": "late-fees",
		"Refunds of the late filing fee take two weeks from the day the office receives the request.": "",
		"Late filing after the deadline costs a fee that the calendar office sets each spring.":       "deadlines"} {
		if got, ok := anchors[text]; !ok || got != want {
			t.Errorf("anchor of %q = %q (found %v), want %q", text, got, ok, want)
		}
	}
	// A passage's own section: the one its opening heading begins, else the one it continues.
	for _, c := range res.Chunks {
		want := map[string]string{"## Late fees": "late-fees", "## Deadlines": "deadlines", "Late filing": "deadlines"}
		for prefix, id := range want {
			if strings.HasPrefix(c.Text, prefix) {
				if got := r.SectionAnchor(c); got != id {
					t.Errorf("SectionAnchor of the passage %.30q = %q, want %q", c.Text, got, id)
				}
				delete(want, prefix)
			}
		}
	}
}
