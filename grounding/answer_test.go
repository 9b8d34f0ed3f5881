package grounding

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ragproxy/ragproxy/retrieval"
)

func testResult() *retrieval.Result {
	return &retrieval.Result{
		Pages: []retrieval.PageHit{
			{ID: 0, URL: "https://site.edu/a/", Title: "Page A"},
			{ID: 1, URL: "https://site.edu/b/", Title: "Page B"},
		},
		Chunks: []retrieval.ChunkHit{{ID: 0, URL: "https://site.edu/a/", Text: "Fees are $80. See [forms](https://site.edu/forms/)."}},
		Context: "## Page A\nURL: https://site.edu/a/\n\nFees are $80. See [forms](https://site.edu/forms/).\n\n" +
			"## Page B\nURL: https://site.edu/b/\n",
	}
}

func TestLinkFilter(t *testing.T) {
	res := testResult()
	res.Context += "Apply at https://apply.partner.example/form and see https://evil.example/phish or ![logo](https://site.edu/logo.png).\n" +
		"Help: https://help.site.edu/x and https://help.site.edu.evil.example/x\n" +
		"Mail mailto:Registrar@Site.edu\n"
	policy := NewLinkPolicy(res, []string{"apply.partner.example"})
	tests := []struct {
		name   string
		deltas []string
		want   string
	}{
		{"plain text passes", []string{"Hello ", "world."}, "Hello world."},
		{"allowed link kept", []string{"See [A](https://site.edu/a/)."}, "See [A](https://site.edu/a/)."},
		{"allowed link split across deltas", []string{"See [A](https://si", "te.edu/a", "/) now"}, "See [A](https://site.edu/a/) now"},
		{"invented link loses its URL", []string{"See [the ", "portal](https://evil.example/x) now"}, "See the portal now"},
		{"invented bare URL dropped", []string{"Go to https://evil.exa", "mple/p for more"}, "Go to  for more"},
		{"allowed bare URL in context kept", []string{"Forms: https://site.edu/forms/ ok"}, "Forms: https://site.edu/forms/ ok"},
		{"fragment and slash ignored", []string{"[A](https://site.edu/a#x)"}, "[A](https://site.edu/a#x)"},
		{"bracket that is no link", []string{"a [note] here"}, "a [note] here"},
		{"unfinished at end flushed", []string{"see [A"}, "see [A"},
		{"autolink invented", []string{"see <https://bad.example/> ok"}, "see  ok"},
		// A page may plant links: only the site's hosts and the allow-list keep theirs.
		{"planted link to another host", []string{"[login](https://evil.example/phish)"}, "login"},
		{"another host of the site's domain", []string{"[help](https://help.site.edu/x)"}, "[help](https://help.site.edu/x)"},
		{"a look-alike domain", []string{"[help](https://help.site.edu.evil.example/x)"}, "help"},
		{"allow-listed host in the context", []string{"[apply](https://apply.partner.example/form)"}, "[apply](https://apply.partner.example/form)"},
		{"scheme and host case", []string{"[A](HTTPS://SITE.EDU/a/) and [x](HTTP://EVIL.EXAMPLE/p)"}, "[A](HTTPS://SITE.EDU/a/) and x"},
		{"upper-case bare URL", []string{"go to HTTPS://evil.example/p now"}, "go to  now"},
		{"image with a data-carrying URL", []string{"![i](HTTPS://evil.example/p.png?d=secret) done"}, "i done"},
		{"image in the context kept", []string{"![logo](https://site.edu/logo.png)"}, "![logo](https://site.edu/logo.png)"},
		{"image split across deltas", []string{"![i](https://ev", "il.example/p.png?d=1)"}, "i"},
		{"javascript link", []string{"[click](javascript:alert(1)) ok"}, "click ok"},
		{"javascript link, upper case", []string{"[click](JavaScript:alert%281%29)"}, "click"},
		{"script link with a title, split at the space", []string{"[x](javascript:alert(1) ", `"t")`}, "x"},
		{"planted link with a title", []string{`[x](https://evil.example/p 'hi') ok`}, "x ok"},
		{"a link whose text outlasts the hold", []string{"[" + strings.Repeat("x", 2*maxHold), "](javascript:alert(1)) ok"},
			"[" + strings.Repeat("x", 2*maxHold) + "] ok"},
		{"data link", []string{"[x](data:text/html;base64,PHNjcmlwdD4=)"}, "x"},
		{"data autolink", []string{"<data:text/html,hi> ok"}, " ok"},
		{"protocol-relative to another host", []string{"[x](//evil.example/p)"}, "x"},
		{"protocol-relative to the site", []string{"[A](//site.edu/a/)"}, "[A](//site.edu/a/)"},
		{"bare www link", []string{"visit www.evil.example/p today"}, "visit  today"},
		{"bare www split across deltas", []string{"visit ww", "w.evil.example/p today"}, "visit  today"},
		{"relative link", []string{"[forms](/forms/)"}, "forms"},
		{"trailing punctuation stays", []string{"See https://evil.example/x."}, "See ."},
		{"mailto in the context", []string{"[mail](mailto:registrar@site.edu)"}, "[mail](mailto:registrar@site.edu)"},
		{"mailto not in the context", []string{"[mail](mailto:thief@evil.example)"}, "mail"},
		// What a removal leaves can join the next delta into a link, which must go too.
		{"a link end, then its target", []string{"x](javascript:1)", "(javascript:2)"}, "x]"},
		{"link text ending in a scheme", []string{"[see http](/x)", "s://evil.example/p ok"}, "see  ok"},
		{"a link end whose target holds another", []string{"](](]()", "))"}, "]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := NewLinkFilter(policy)
			var got strings.Builder
			for _, d := range tt.deltas {
				got.WriteString(f.Write(d))
			}
			got.WriteString(f.Flush())
			if diff := cmp.Diff(tt.want, got.String()); diff != "" {
				t.Errorf("filtered (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLinkFilterBoundsHeldText(t *testing.T) {
	f := NewLinkFilter(nil)
	out := f.Write("[" + strings.Repeat("x", 2*maxHold))
	if out == "" {
		t.Fatal("filter held back more than maxHold bytes")
	}
}

func TestCited(t *testing.T) {
	res := testResult()
	got := Cited("Per [B](https://site.edu/b) the fee is $80.", res, 3)
	if diff := cmp.Diff([]Source{{URL: "https://site.edu/b/", Title: "Page B"}}, got); diff != "" {
		t.Errorf("cited (-want +got):\n%s", diff)
	}
	got = Cited("No links here.", res, 1)
	if diff := cmp.Diff([]Source{{URL: "https://site.edu/a/", Title: "Page A"}}, got); diff != "" {
		t.Errorf("uncited falls back to top pages (-want +got):\n%s", diff)
	}
}

func TestSourcesMarkdown(t *testing.T) {
	got := SourcesMarkdown([]Source{{URL: "https://site.edu/a/", Title: "A [draft]"}})
	want := "\n\n**Sources**\n- [A (draft)](https://site.edu/a/)\n"
	if got != want {
		t.Errorf("SourcesMarkdown = %q, want %q", got, want)
	}
	if SourcesMarkdown(nil) != "" {
		t.Error("no sources should render nothing")
	}
}

// TestExtractiveAnswerLinksSections checks that a quote's link opens its page at the section it stands in: the
// lead's with its text directive after the section's id, another page's quote at its section alone.
func TestExtractiveAnswerLinksSections(t *testing.T) {
	res := testResult()
	res.Chunks = append(res.Chunks, retrieval.ChunkHit{ID: 1, URL: "https://site.edu/b/", Text: "Page B says fees are due in May."})
	ev := []retrieval.Evidence{
		{Chunk: 0, Text: "Fees are $80.", Own: 1, Anchor: "late-fees"},
		{Chunk: 1, Text: "Page B says fees are due in May.", Own: 1, Anchor: "dates (spring)"},
	}
	ans := ExtractiveAnswer(res, ev)
	for _, want := range []string{"— [Page A](https://site.edu/a/#late-fees:~:text=Fees%20are%20%2480.)\n",
		"— [Page B](https://site.edu/b/#dates%20%28spring%29)\n"} {
		if !strings.Contains(ans, want) {
			t.Errorf("answer %q lacks %q", ans, want)
		}
	}
	// The Sources name the pages alone.
	if src := Cited(ans, res, 5); len(src) != 2 || src[0].URL != "https://site.edu/a/" || src[1].URL != "https://site.edu/b/" {
		t.Errorf("Cited = %+v, want the two pages", src)
	}
	// A page whose section has no id is linked as before.
	ev[0].Anchor, ev[1].Anchor = "", ""
	ans = ExtractiveAnswer(res, ev)
	for _, want := range []string{"(https://site.edu/a/#:~:text=Fees%20are%20%2480.)", "(https://site.edu/b/)"} {
		if !strings.Contains(ans, want) {
			t.Errorf("answer without anchors %q lacks %q", ans, want)
		}
	}
}

func TestExtractiveAnswerAndDontKnow(t *testing.T) {
	res := testResult()
	long := "Late fees apply after the deadline. " + strings.Repeat("Other words fill this sentence up. ", 20) +
		"The fee for a late filing is $80 in all cases"
	ev := []retrieval.Evidence{
		{Chunk: 0, Text: "Fees are $80.", Next: []string{"See [forms](https://site.edu/forms/).", strings.Repeat("A next sentence too long to quote whole. ", 12)}, Own: 1},
		{Chunk: 0, Text: "Fees are $80.", Own: 1},                         // the same unit again is quoted once
		{Chunk: 0, Text: "See [forms](https://site.edu/forms/).", Own: 1}, // the lead quotes it already, as its next sentence
		{Chunk: 0, Text: long, Own: 0.5, Matched: [][2]int{{len(long) - 10, len(long) - 7}}},
	}
	ans := ExtractiveAnswer(res, ev)
	// The lead's link names the quoted words as a text fragment, which scrolls the page to them; a quote of the
	// lead's page right after it shares that link, after it.
	for _, want := range []string{"> Fees are $80. See [forms](https://site.edu/forms/).\n\n> … ",
		"The fee for a late filing is $80 in all cases\n\n— [Page A](https://site.edu/a/#:~:text=Fees%20are%20%2480.)\n",
		"No language model is configured"} {
		if !strings.Contains(ans, want) {
			t.Errorf("extractive answer %q lacks %q", ans, want)
		}
	}
	if strings.Contains(ans, "The site also says:") || strings.Count(ans, "— [") != 1 {
		t.Errorf("quotes of one page are parted: %q", ans)
	}
	// A quote of another page goes on with "the site also says", the lead's run linked before it.
	res.Chunks = append(res.Chunks, retrieval.ChunkHit{ID: 1, URL: "https://site.edu/b/", Text: "Page B says fees are due in May."})
	two := ExtractiveAnswer(res, append(ev, retrieval.Evidence{Chunk: 1, Text: "Page B says fees are due in May.", Own: 0.5}))
	for _, want := range []string{"$80 in all cases\n\n— [Page A](https://site.edu/a/#:~:text=Fees%20are%20%2480.)\n\nThe site also says:\n\n> Page B says",
		"— [Page B](https://site.edu/b/)\n"} {
		if !strings.Contains(two, want) {
			t.Errorf("answer of two pages %q lacks %q", two, want)
		}
	}
	if !strings.HasPrefix(ans, "> Fees are $80.") {
		t.Errorf("the best unit does not lead the answer: %q", ans)
	}
	if strings.Contains(ans, "A next sentence") {
		t.Errorf("a next sentence that does not fit whole is quoted in part: %q", ans)
	}
	if strings.Count(ans, "Fees are $80") != 1 || strings.Count(ans, "See [forms]") != 1 {
		t.Errorf("a unit is quoted twice: %q", ans)
	}
	if strings.Contains(ans, "Other words fill this sentence up. Other words fill this sentence up. Other words fill this sentence up. Other words fill this sentence up. Other words fill this sentence up. Other words fill this sentence up. Other words fill this sentence up.") {
		t.Errorf("a long unit is not clipped: %q", ans)
	}
	weak := ExtractiveAnswer(res, []retrieval.Evidence{{Chunk: 0, Text: "Fees are due.", Own: 0.25, Cover: 0.25}})
	if !strings.HasPrefix(weak, "No passage answers this directly") {
		t.Errorf("a unit holding little of the question is offered as the answer: %q", weak)
	}
	// A table row names little of the question itself; its heading, its page's title and the amount asked for
	// make it the answer.
	row := ExtractiveAnswer(res, []retrieval.Evidence{{Chunk: 0, Text: "| Residency | Full-time |\n| --- | --- |\n| In-state | $4,850 |",
		Own: 0.34, Cover: 0.92}})
	if !strings.HasPrefix(row, "> | Residency |") {
		t.Errorf("a table row that answers under its heading is not offered as the answer: %q", row)
	}
	// Rows of one table quoted in a row read as one table, its header once; a row of another table starts anew.
	head := "| Residency | Full-time |\n| --- | --- |\n"
	rows := ExtractiveAnswer(res, []retrieval.Evidence{
		{Chunk: 0, Text: head + "| In-state | $4,850 |", Own: 0.6, Cover: 0.9, Score: 1},
		{Chunk: 0, Text: head + "| Out-of-state | $9,700 |", Own: 0.6, Cover: 0.9, Score: 0.9},
		{Chunk: 0, Text: "| Fee | Amount |\n| --- | --- |\n| Parking | $180 |", Own: 0.6, Cover: 0.9, Score: 0.8}})
	if want := "> | Residency | Full-time |\n> | --- | --- |\n> | In-state | $4,850 |\n> | Out-of-state | $9,700 |\n\n> | Fee | Amount |"; !strings.HasPrefix(rows, want) {
		t.Errorf("rows of one table = %q, want them to start %q", rows, want)
	}
	dk := DontKnow(res, 1)
	if !strings.HasPrefix(dk, "I don't know") || !strings.Contains(dk, "[Page A](https://site.edu/a/)") || strings.Contains(dk, "Page B") {
		t.Errorf("DontKnow = %q", dk)
	}
}

func TestExtractiveAnswerQuotesWhatItsLeadLeftOut(t *testing.T) {
	// The lead's paragraph goes on with a sentence too long to fit in its quote: when that sentence is a unit of
	// its own among the best, it is quoted, not taken as shown.
	long := "The fee is waived for students who " + strings.Repeat("meet one of many conditions, ", 14) + "as the office decides."
	ev := []retrieval.Evidence{
		{Chunk: 0, Text: "Fees are $80.", Next: []string{"See the office.", long}, Own: 1, Score: 1},
		{Chunk: 0, Text: "See the office.", Own: 1, Score: 0.9},
		{Chunk: 0, Text: long, Own: 1, Score: 0.8, Matched: [][2]int{{4, 7}}},
	}
	ans := ExtractiveAnswer(testResult(), ev)
	if strings.Count(ans, "See the office.") != 1 {
		t.Errorf("a sentence the lead shows is quoted again: %q", ans)
	}
	if !strings.Contains(ans, "The fee is waived") {
		t.Errorf("a unit the lead's quote left out is not quoted: %q", ans)
	}
}

func TestExtractiveAnswerQuotesMoreShortUnits(t *testing.T) {
	res := testResult()
	units := func(text string, n int) []retrieval.Evidence {
		var ev []retrieval.Evidence
		for i := range n {
			ev = append(ev, retrieval.Evidence{Chunk: 0, Text: fmt.Sprintf("Unit %d: %s", i, text), Own: 1, Score: 1})
		}
		return ev
	}
	count := func(ans string) int { return strings.Count(ans, "> Unit ") }
	if got := count(ExtractiveAnswer(res, units("Fees are $80.", 8))); got != extractiveMaxUnits {
		t.Errorf("short units: %d quoted, want %d", got, extractiveMaxUnits)
	}
	long := strings.Repeat("A sentence of the page that runs on. ", 5) + "It ends here."
	if got := count(ExtractiveAnswer(res, units(long, 8))); got != ExtractiveUnits {
		t.Errorf("long units: %d quoted, want %d", got, ExtractiveUnits)
	}
	// A link counts by its text, as a reader sees it: rows of package links are short to read, however long
	// their addresses.
	linked := "[`backupninja`](http://packages.example.org/sid/backupninja/" + strings.Repeat("x", 150) + ") backs up."
	if got := count(ExtractiveAnswer(res, units(linked, 8))); got != extractiveMaxUnits {
		t.Errorf("units short to read with long link addresses: %d quoted, want %d", got, extractiveMaxUnits)
	}
}

func TestQuoteLeadsIntoItsBlock(t *testing.T) {
	// A sentence ending with a colon is quoted with the command or the items it announces, each on a line of
	// its own, as a reader of the page sees them.
	e := retrieval.Evidence{Text: "To launch Python 3.7, try the command:", Next: []string{"```\npy -3.7\n```"}}
	if got, want := quote(e, 400), "To launch Python 3.7, try the command:\n```\npy -3.7\n```"; got != want {
		t.Errorf("quote = %q, want %q", got, want)
	}
	e = retrieval.Evidence{Text: "The options are:", Next: []string{"- `-v` prints more", "- `-q` prints less"}}
	if got, want := quote(e, 400), "The options are:\n- `-v` prints more\n- `-q` prints less"; got != want {
		t.Errorf("quote = %q, want %q", got, want)
	}
	e = retrieval.Evidence{Text: "Fees are $80.", Next: []string{"Pay online."}}
	if got, want := quote(e, 400), "Fees are $80. Pay online."; got != want {
		t.Errorf("quote = %q, want %q", got, want)
	}
	// What the colon announces may take a lead quote's room in a shorter quote; beyond that it is left out.
	example := "```apache\nSetEnv CSP_PROJECT_DOMAINS \"" + strings.Repeat("https://*.example.net/ ", 10) + "\"\n```"
	e = retrieval.Evidence{Text: "The hosts can be URLs with or without globs, as in this example:", Next: []string{example}}
	if got, want := quote(e, extractiveMore), e.Text+"\n"+example; got != want {
		t.Errorf("quote = %q, want %q", got, want)
	}
	e.Next = []string{strings.Replace(example, "/ ", "/ "+strings.Repeat("x", 400), 1)}
	if got := quote(e, extractiveMore); got != e.Text {
		t.Errorf("quote of a unit announcing a block longer than a lead = %q, want the unit alone", got)
	}
	// So may what a caption announces.
	e = retrieval.Evidence{Text: "**Example 3. CSP hosts**", Next: []string{example}}
	if got, want := quote(e, extractiveMore), e.Text+"\n"+example; got != want {
		t.Errorf("quote = %q, want %q", got, want)
	}
	long := retrieval.Evidence{Text: "Fees are $80.", Next: []string{example}} // no colon: the shorter room holds
	if got := quote(long, extractiveMore); got != long.Text {
		t.Errorf("quote = %q, want the unit alone", got)
	}
}

// A unit that refers back is quoted after the sentence it refers to when that is short and both fit, else alone.
func TestQuoteReadsTheSentenceItRefersTo(t *testing.T) {
	e := retrieval.Evidence{Text: "This is accomplished by using the command `passwd -l user` (lock).",
		Before: "Sometimes you need to disable a user account."}
	if got, want := quote(e, extractiveLead), e.Before+" "+e.Text; got != want {
		t.Errorf("quote = %q, want %q", got, want)
	}
	e.Before = strings.Repeat("A long sentence about accounts. ", 6)
	if got := quote(e, extractiveLead); got != e.Text {
		t.Errorf("quote after a sentence longer than %d runes = %q, want the unit alone", extractiveBefore, got)
	}
	e.Before = "Sometimes you need to disable a user account."
	if got := quote(e, len(e.Text)+10); got != e.Text {
		t.Errorf("quote in a room too small for both = %q, want the unit alone", got)
	}
}

func TestClipKeepsTheMatches(t *testing.T) {
	text := strings.Repeat("filler words here and there ", 30) + "the answer is 42 units " + strings.Repeat("tail words ", 40)
	i := strings.Index(text, "42")
	got := clip(retrieval.Evidence{Text: text, Matched: [][2]int{{i, i + 2}, {i + 3, i + 8}}}, 200)
	if !strings.Contains(got, "42 units") || !strings.HasPrefix(got, "… ") || !strings.HasSuffix(got, " …") {
		t.Errorf("clip = %q, want the matched words between cut marks", got)
	}
	if n := len([]rune(got)); n > 2*200+4 {
		t.Errorf("clip kept %d runes of %d", n, len(text))
	}
	if short := "A short sentence."; clip(retrieval.Evidence{Text: short}, 200) != short {
		t.Error("clip changed a short unit")
	}
}

// A cut never falls inside a link or a code span: the quote keeps one whole (when a match is in it) or stops before
// it, and starts at a link rather than inside its text.
func TestClipKeepsSpansWhole(t *testing.T) {
	link := "[Section 6.2.5, “Managing Package Priorities”](https://handbook.example/apt.html#sect.apt-pinning)"
	text := "This can help manage package installation priorities with the preferences file (see " + link + ") " +
		strings.Repeat("and more words after it ", 10)
	i := strings.Index(text, "priorities")
	got := clip(retrieval.Evidence{Text: text, Matched: [][2]int{{i, i + 10}}}, 100)
	if strings.Contains(got, "[") || !strings.HasSuffix(got, "(see …") {
		t.Errorf("clip = %q, want it to stop before the link", got)
	}
	j := strings.Index(text, "Managing")
	if got := clip(retrieval.Evidence{Text: text, Matched: [][2]int{{i, i + 10}, {j, j + 8}}}, 100); !strings.Contains(got, link) {
		t.Errorf("clip = %q, want the link holding a match whole", got)
	}
	code := strings.Repeat("words before the command ", 8) + "run `wine .../setup.exe` to install " + strings.Repeat("the tail ", 20)
	k := strings.Index(code, "install")
	if got := clip(retrieval.Evidence{Text: code, Matched: [][2]int{{k, k + 7}}}, 60); strings.Count(got, "`")%2 != 0 {
		t.Errorf("clip = %q cuts a code span", got)
	}
}

func TestTextFragment(t *testing.T) {
	for unit, want := range map[string]string{
		"All passwords must have eight or more characters.":                      "#:~:text=All%20passwords%20must%20have%20eight",
		"- **Goal**: 24 hours to respond, 3 days (72h) to resolve.":              "#:~:text=Goal%3A%2024%20hours%20to%20respond%2C%203",
		"1. See [the policy](https://site.edu/p/) on `checkpoint_timeout` first": "#:~:text=See%20the%20policy%20on",
		"| Fees | $80 |": "",
		"```\ncode\n```": "",
		"Too short.":     "",
		// Other scripts' letters are written as they are (an IRI), their spaces and punctuation percent-encoded,
		// and so is a mark a reader could not see (a right-to-left mark).
		"حداقل ۵۰۰ مگابایت فضای دیسک، برای نصب لازم است.":  "#:~:text=حداقل%20۵۰۰%20مگابایت%20فضای%20دیسک%D8%8C",
		"Пароль должен быть\u00a0не короче восьми знаков.": "#:~:text=Пароль%20должен%20быть%20не%20короче",
		"Café au lait ‏est servi à 8 h du matin.":          "#:~:text=Café%20au%20lait%20%E2%80%8Fest%20servi%20à%208%20h",
		// The page shows an entity as its character and a backslash-escaped character without the backslash.
		"If a &lt;pathspec&gt; is given, only matching files are listed.": "#:~:text=If%20a%20%3Cpathspec%3E%20is%20given%2C",
		"Use snake\\_case and \\*args in names.":                          "#:~:text=Use%20snake_case%20and%20%2Aargs%20in",
	} {
		if got := textFragment(unit); got != want {
			t.Errorf("textFragment(%q) = %q, want %q", unit, got, want)
		}
	}
	// Chinese, Japanese and Korean end a fragment where a word ends: a short first clause whole, else at the last
	// change of script within the first characters.
	for unit, want := range map[string]string{
		"各安定版は約5年の寿命が期待されています。":                       "各安定版は約5年の寿命が期待されています",
		"APT 从这些软件库下载软件包。":                            "APT 从这些软件库下载软件包",
		"Debian LTS プロジェクトは2014年に始まり、5年間のサポートを目指します。": "Debian LTS",
		"設定ファイルの読み込み順序とサービスを再起動する方法と管理者の権限について説明します。": "設定ファイルの読み込み順序と",
		"はい、そうです。": "",
	} {
		if want != "" {
			want = "#:~:text=" + fragmentEscape(want)
		}
		if got := textFragment(unit); got != want {
			t.Errorf("textFragment(%q) = %q, want %q", unit, got, want)
		}
	}
}

// A long code block is quoted by the lines around its first match, with "..." for the lines left out.
func TestClipCode(t *testing.T) {
	var lines []string
	for i := range 30 {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	lines[20] = "cooldown: default-days: 4"
	text := "```yaml\n" + strings.Join(lines, "\n") + "\n```"
	i := strings.Index(text, "cooldown")
	got := clip(retrieval.Evidence{Text: text, Matched: [][2]int{{i, i + 9}}}, 100)
	want := "```yaml\n...\nline 19\ncooldown: default-days: 4\nline 21\nline 22\nline 23\nline 24\nline 25\nline 26\n...\n```"
	if got != want {
		t.Errorf("clip = %q, want %q", got, want)
	}
	if got := clip(retrieval.Evidence{Text: text}, 100); !strings.HasPrefix(got, "```yaml\nline 0\n") || strings.Count(got, "\n") != extractiveCodeLines+2 {
		t.Errorf("clip without a match = %q, want the first %d lines", got, extractiveCodeLines)
	}
}

// FuzzLinkFilter checks that whatever an answer holds and however it is cut into deltas, the filtered answer
// holds nothing the filter would still take out (no link the policy refuses survives), and filtering never panics.
func FuzzLinkFilter(f *testing.F) {
	for _, s := range []string{"See [A](https://site.edu/a/).", "[x](javascript:alert(1)) ok", "![i](HTTPS://evil.example/p.png?d=1)",
		"visit www.evil.example/p", "<data:text/html,hi>", "[t](https://evil.example/p 'x')", "[[a](b)](c)", "![a](", "<https://"} {
		f.Add(s, 3)
	}
	res := testResult()
	policy := NewLinkPolicy(res, nil)
	f.Fuzz(func(t *testing.T, s string, cut int) {
		lf := NewLinkFilter(policy)
		cut = min(max(cut, 0), len(s))
		out := lf.Write(s[:cut]) + lf.Write(s[cut:]) + lf.Flush()
		again := NewLinkFilter(policy)
		if twice := again.Write(out) + again.Flush(); twice != out {
			t.Errorf("filtering %q (cut at %d) left links to take out:\n once %q\ntwice %q", s, cut, out, twice)
		}
	})
}

func TestExtractiveAnswerLinksOnePageOnce(t *testing.T) {
	res := testResult()
	res.Chunks = append(res.Chunks, retrieval.ChunkHit{ID: 1, URL: "https://site.edu/b/", Text: "Forms are online."})
	links := func(ans, url string) int { return strings.Count(ans, "]("+url) }
	// Every quote of page A: its lead's link names their page, once.
	ev := []retrieval.Evidence{
		{Chunk: 0, Text: "Fees are $80.", Own: 1, Score: 1},
		{Chunk: 0, Text: "Late fees are $20.", Own: 1, Score: 0.9},
		{Chunk: 0, Text: "Fees are due in May.", Own: 1, Score: 0.8},
	}
	one := ExtractiveAnswer(res, ev)
	if n := links(one, "https://site.edu/a/"); n != 1 || !strings.Contains(one, "Fees are due in May.") {
		t.Errorf("quotes of one page: %d links to it, want 1: %q", n, one)
	}
	// A quote of another page among them: each page's quotes keep their link.
	ev[1].Chunk = 1
	two := ExtractiveAnswer(res, ev)
	if na, nb := links(two, "https://site.edu/a/"), links(two, "https://site.edu/b/"); na != 2 || nb != 1 {
		t.Errorf("quotes of two pages: %d links to A (want 2), %d to B (want 1): %q", na, nb, two)
	}
}

// An offline answer whose passages hold no word of the question quotes nothing: it says it does not know and
// offers the closest pages, rather than announcing the closest passages and showing none.
func TestOfflineAnswerNothingToQuote(t *testing.T) {
	r, _ := exampleIndex(t)
	res := testResult()
	res.Query = "Parkplatz?"
	got := OfflineAnswer(r, res, 2)
	want := DontKnow(res, 2)
	if got != want || !strings.Contains(got, "](https://site.edu/b/)") {
		t.Errorf("answer:\n%s\nwant:\n%s", got, want)
	}
	res.Query = "When are fees due?"
	if got := OfflineAnswer(r, res, 2); !strings.Contains(got, "> Fees are $80.") {
		t.Errorf("an answer with a passage to quote:\n%s", got)
	}
}
