package faqmarkup

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/net/html"
)

const page = "https://example.org/help/"

// extractTest is one page and the entries expected from it.
type extractTest struct {
	name string
	html string
	url  string // page URL; page when empty
	want []Entry
}

// allExtractTests returns every table of pages, for the fuzz seeds.
func allExtractTests() []extractTest {
	return slices.Concat(jsonldTests(), detailsTests(), dlTests(), headingTests(), chromeTests(), mixedTests())
}

func runExtractTests(t *testing.T, tests []extractTest) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := tt.url
			if u == "" {
				u = page
			}
			got, err := Extract([]byte(tt.html), u)
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			checkEntries(t, got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			// From a tree parsed already: the same entries, and the tree as it was (a cleaner reads it next).
			root, err := html.Parse(strings.NewReader(tt.html))
			if err != nil {
				t.Fatal(err)
			}
			before := render(t, root)
			fromTree, err := ExtractTree(root, []byte(tt.html), u)
			if err != nil {
				t.Fatalf("ExtractTree: %v", err)
			}
			if diff := cmp.Diff(got, fromTree); diff != "" {
				t.Errorf("ExtractTree differs from Extract (-Extract +ExtractTree):\n%s", diff)
			}
			if render(t, root) != before {
				t.Error("ExtractTree changed the tree")
			}
		})
	}
}

func render(t *testing.T, root *html.Node) string {
	t.Helper()
	var b strings.Builder
	if err := html.Render(&b, root); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// checkEntries asserts what every entry satisfies.
func checkEntries(t *testing.T, entries []Entry) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range entries {
		if strings.TrimSpace(e.Question) == "" || strings.TrimSpace(e.Answer) == "" {
			t.Errorf("entry with an empty question or answer: %+v", e)
		}
		if !slices.Contains([]string{SourceJSONLD, SourceDetails, SourceDL, SourceHeading}, e.Source) {
			t.Errorf("entry with source %q: %+v", e.Source, e)
		}
		k := questionKey(e.Question)
		if seen[k] {
			t.Errorf("question %q twice", e.Question)
		}
		seen[k] = true
	}
}

func jsonld(blocks ...string) string {
	var b strings.Builder
	b.WriteString("<html><head><title>Help</title>")
	for _, s := range blocks {
		b.WriteString(`<script type="application/ld+json">` + s + `</script>`)
	}
	b.WriteString("</head><body><p>Hello.</p></body></html>")
	return b.String()
}

func jsonldTests() []extractTest {
	return []extractTest{
		{name: "single object", html: jsonld(`{"@context":"https://schema.org","@type":"FAQPage","mainEntity":[
			{"@type":"Question","name":"How do I reset my password?","acceptedAnswer":{"@type":"Answer","text":"Use the reset link."}},
			{"@type":"Question","name":"Can I pay by card?","acceptedAnswer":{"@type":"Answer","text":"Yes."}}]}`),
			want: []Entry{
				{Question: "How do I reset my password?", Answer: "Use the reset link.", URL: page, Source: SourceJSONLD},
				{Question: "Can I pay by card?", Answer: "Yes.", URL: page, Source: SourceJSONLD},
			}},
		{name: "html in answers", html: jsonld(`{"@type":"FAQPage","mainEntity":{"@type":"Question",
			"name":"What does it cost &amp; when?","acceptedAnswer":{"text":"<p>It costs <b>10 EUR</b>.</p><ul><li>monthly</li><li>yearly</li></ul><p>Ask   us.</p>"}}}`),
			want: []Entry{{Question: "What does it cost & when?", Answer: "It costs 10 EUR.\n\n- monthly\n- yearly\n\nAsk us.",
				URL: page, Source: SourceJSONLD}}},
		{name: "plain answer keeps paragraphs", html: jsonld(`{"@type":"FAQPage","mainEntity":{"@type":"Question",
			"name":"Is it free?","acceptedAnswer":{"text":"Yes.\n\nFor  everyone.\nAlways."}}}`),
			want: []Entry{{Question: "Is it free?", Answer: "Yes.\n\nFor everyone. Always.", URL: page, Source: SourceJSONLD}}},
		{name: "graph", html: jsonld(`{"@context":"https://schema.org","@graph":[{"@type":"WebPage","name":"Help"},
			{"@type":"FAQPage","mainEntity":[{"@type":"Question","name":"Where are you?","acceptedAnswer":{"text":"In Paris."}}]}]}`),
			want: []Entry{{Question: "Where are you?", Answer: "In Paris.", URL: page, Source: SourceJSONLD}}},
		{name: "top-level array and type array", html: jsonld(`[{"@type":"Organization","name":"X"},
			{"@type":["WebPage","FAQPage"],"mainEntity":{"@type":"Question","name":"Who can join?","acceptedAnswer":{"text":"Anyone."}}}]`),
			want: []Entry{{Question: "Who can join?", Answer: "Anyone.", URL: page, Source: SourceJSONLD}}},
		{name: "full IRI type nested in a WebPage", html: jsonld(`{"@type":"WebPage","mainEntity":{"@type":"https://schema.org/FAQPage",
			"mainEntity":{"@type":"schema:Question","name":"Why is the sky blue?","acceptedAnswer":{"text":"Scattering."}}}}`),
			want: []Entry{{Question: "Why is the sky blue?", Answer: "Scattering.", URL: page, Source: SourceJSONLD}}},
		{name: "acceptedAnswer array", html: jsonld(`{"@type":"FAQPage","mainEntity":{"@type":"Question","name":"When do you open?",
			"acceptedAnswer":[{"text":"At nine on weekdays."},{"text":"At ten on Saturdays."}]}}`),
			want: []Entry{{Question: "When do you open?", Answer: "At nine on weekdays.\n\nAt ten on Saturdays.", URL: page,
				Source: SourceJSONLD}}},
		{name: "fragment from url or @id", html: jsonld(`{"@type":"FAQPage","mainEntity":[
			{"@type":"Question","url":"https://example.org/help/#refunds","name":"Do you refund?","acceptedAnswer":{"text":"Within 30 days."}},
			{"@type":"Question","@id":"#ship","name":"Do you ship abroad?","acceptedAnswer":{"text":"To the EU."}},
			{"@type":"Question","url":"http://EXAMPLE.org/help#tax","name":"Is tax included?","acceptedAnswer":{"text":"Yes."}},
			{"@type":"Question","url":"https://example.org/other/#x","name":"Is this elsewhere?","acceptedAnswer":{"text":"Yes."}}]}`),
			want: []Entry{
				{Question: "Do you refund?", Answer: "Within 30 days.", URL: page + "#refunds", Source: SourceJSONLD},
				{Question: "Do you ship abroad?", Answer: "To the EU.", URL: page + "#ship", Source: SourceJSONLD},
				{Question: "Is tax included?", Answer: "Yes.", URL: page + "#tax", Source: SourceJSONLD},
				{Question: "Is this elsewhere?", Answer: "Yes.", URL: page, Source: SourceJSONLD},
			}},
		{name: "malformed block skipped", html: jsonld(`{"@type":"FAQPage","mainEntity":[{"name":"Broken?",}]}`,
			`{"@type":"FAQPage","mainEntity":{"@type":"Question","name":"Does the next block count?","acceptedAnswer":{"text":"It does."}}}`),
			want: []Entry{{Question: "Does the next block count?", Answer: "It does.", URL: page, Source: SourceJSONLD}}},
		{name: "comment wrapper and type parameters", html: `<script type="Application/LD+JSON; charset=utf-8"><!--
			{"@type":"FAQPage","mainEntity":{"@type":"Question","name":"Is it wrapped?","acceptedAnswer":{"text":"In a comment."}}}
			--></script>`,
			want: []Entry{{Question: "Is it wrapped?", Answer: "In a comment.", URL: page, Source: SourceJSONLD}}},
		{name: "other types and incomplete questions ignored", html: jsonld(
			`{"@type":"QAPage","mainEntity":{"@type":"Question","name":"Is this a forum?","suggestedAnswer":{"text":"Yes."}}}`,
			`{"@type":"Article","name":"What is new?","mainEntity":{"@type":"Question","name":"Not an FAQ?","acceptedAnswer":{"text":"No."}}}`,
			`{"@type":"FAQPage","mainEntity":[{"@type":"Question","name":"No answer?"},{"@type":"Question","acceptedAnswer":{"text":"No question."}},
				{"@type":"Answer","name":"Wrong type?","acceptedAnswer":{"text":"Yes."}},"a string",42]}`),
			want: nil},
		{name: "not JSON-LD", html: `<script type="application/json">{"@type":"FAQPage","mainEntity":{"@type":"Question","name":"Is it data?","acceptedAnswer":{"text":"No."}}}</script>`,
			want: nil},
	}
}

func detailsTests() []extractTest {
	return []extractTest{
		{name: "question summaries", html: `<main>
			<details id="pay"><summary>How do I pay?</summary><p>By card   or transfer.</p><p>Invoices monthly.</p></details>
			<details><summary id="s2">Can I cancel at any time</summary>Yes, from your account page.</details>
			<details><summary><h3>Is there a trial?</h3></summary><p>Thirty days.</p></details>
			</main>`,
			want: []Entry{
				{Question: "How do I pay?", Answer: "By card or transfer.\n\nInvoices monthly.", URL: page + "#pay", Source: SourceDetails},
				{Question: "Can I cancel at any time", Answer: "Yes, from your account page.", URL: page + "#s2", Source: SourceDetails},
				{Question: "Is there a trial?", Answer: "Thirty days.", URL: page, Source: SourceDetails},
			}},
		{name: "menus and show more", html: `<body>
			<details class="dropdown"><summary>Products</summary>
				<details><summary>Software</summary><ul><li><a href="/a">A</a></li><li><a href="/b">B</a></li></ul></details>
				<details><summary>Services</summary><a href="/c">C</a></details>
			</details>
			<details><summary>Show more</summary><p>The rest of the story.</p></details>
			<details><summary>What do we offer?</summary><ul><li><a href="/a">Hosting</a></li><li><a href="/b">Mail</a></li><li><a href="/c">Backups</a></li></ul></details>
			<details><summary><a href="/faq/refunds">How do refunds work?</a></summary><p>Read more on the refunds page.</p></details>
			<details><summary>Why?</summary><p>Because.</p></details>
			<details><summary>Is it empty?</summary>  </details>
			</body>`,
			want: nil},
		{name: "answer with one link", html: `<details><summary>Where are the forms?</summary>On the <a href="/forms">forms page</a>.</details>`,
			want: []Entry{{Question: "Where are the forms?", Answer: "On the forms page.", URL: page, Source: SourceDetails}}},
	}
}

func dlTests() []extractTest {
	return []extractTest{
		{name: "question list", html: `<dl>
			<dt id="hours">When are you open?</dt><dd>Monday to Friday.</dd><dd>Closed on holidays.</dd>
			<dt>Where do I park?</dt><dd>Behind the <em>library</em>.</dd>
			<dt>Opening hours</dt><dd>9 to 5.</dd>
			</dl>`,
			want: []Entry{
				{Question: "When are you open?", Answer: "Monday to Friday.\n\nClosed on holidays.", URL: page + "#hours", Source: SourceDL},
				{Question: "Where do I park?", Answer: "Behind the library.", URL: page, Source: SourceDL},
			}},
		{name: "div groups and alternatives", html: `<dl>
			<div id="g1"><dt>How do I apply?</dt><dt>How can I apply?</dt><dd>Online.</dd></div>
			<div><dt>Is there a fee?</dt><dd>No.</dd></div>
			</dl>`,
			want: []Entry{
				{Question: "How do I apply?", Answer: "Online.", URL: page + "#g1", Alternatives: []string{"How can I apply?"}, Source: SourceDL},
				{Question: "Is there a fee?", Answer: "No.", URL: page, Source: SourceDL},
			}},
		{name: "glossary", html: `<dl>
			<dt>API</dt><dd>Application programming interface.</dd>
			<dt>Token</dt><dd>A unit of text.</dd>
			<dt>Why RAG?</dt><dd>Grounding.</dd>
			<dt>Embedding</dt><dd>A vector.</dd>
			</dl>`,
			want: nil},
		{name: "metadata list", html: `<dl><dt>Author</dt><dd>Ann</dd><dt>Date</dt><dd>2024</dd></dl>`, want: nil},
	}
}

// faqSection wraps headings and content in a page whose title says nothing about questions.
func faqSection(body string) string {
	return `<html><head><title>Support</title></head><body><main><h1>Support</h1>` + body + `</main></body></html>`
}

func headingTests() []extractTest {
	long := strings.Repeat("This sentence is part of a long answer. ", 60)
	return []extractTest{
		{name: "faq section", html: faqSection(`
			<h2>About us</h2><p>We make tools.</p>
			<h2 id="faq">Frequently asked questions</h2>
			<h3 id="install">How do I install it?</h3><p>Run the installer.</p><ul><li>Windows</li><li>macOS</li></ul>
			<h3>Does it run on <code>Linux</code>?</h3><p>Yes.</p><h4>Which distributions</h4><p>All of them.</p>
			<h3>What's new in version 2</h3><p>Speed.</p>
			<h2>Contact</h2><p>Write to us.</p>`),
			want: []Entry{
				{Question: "How do I install it?", Answer: "Run the installer.\n\n- Windows\n- macOS", URL: page + "#install", Source: SourceHeading},
				{Question: "Does it run on Linux?", Answer: "Yes.\n\nWhich distributions\n\nAll of them.", URL: page, Source: SourceHeading},
				{Question: "What's new in version 2", Answer: "Speed.", URL: page, Source: SourceHeading},
			}},
		{name: "categories under the faq heading", html: faqSection(`
			<h2>FAQs</h2><h3>Billing</h3><h4>How do refunds work?</h4><p>Within 30 days.</p>
			<h3>Accounts</h3><h4>Can I change my name?</h4><p>Yes.</p>
			<h2>Why choose us?</h2><p>We are good.</p>`),
			want: []Entry{
				{Question: "How do refunds work?", Answer: "Within 30 days.", URL: page, Source: SourceHeading},
				{Question: "Can I change my name?", Answer: "Yes.", URL: page, Source: SourceHeading},
			}},
		{name: "no faq context", html: faqSection(`
			<h2>What happened?</h2><p>The disk filled up.</p>
			<h2>What did we learn?</h2><p>Monitor disks.</p>
			<h2>Where do you live?</h2><p>In Berlin.</p>`),
			want: nil},
		{name: "title says faq", html: `<html><head><title>FAQ - Example</title></head><body>
			<h2>Questions?</h2><p>One word is not a question.</p><h2>Any questions?</h2><p>Write to us.</p><h2>Is it safe?</h2><p>Yes.</p></body></html>`,
			want: []Entry{
				{Question: "Any questions?", Answer: "Write to us.", URL: page, Source: SourceHeading},
				{Question: "Is it safe?", Answer: "Yes.", URL: page, Source: SourceHeading},
			}},
		{name: "url says faq", url: "https://example.org/mail-faq.html", html: faqSection(
			`<h3>Will we lose mail?</h3><p>No.</p>`),
			want: []Entry{{Question: "Will we lose mail?", Answer: "No.", URL: "https://example.org/mail-faq.html", Source: SourceHeading}}},
		{name: "faq class and accordion markup", html: faqSection(`
			<div class="accordion" id="faqAccordion">
			 <div class="card"><div class="card-header"><h5><button>How long is delivery?</button></h5></div>
			   <div class="collapse"><div class="card-body">Two days.</div></div></div>
			 <div class="card"><div class="card-header"><h5><button>Can I return items?</button></h5></div>
			   <div class="collapse"><div class="card-body">Within a month.</div></div></div>
			</div>
			<p>Other text after the accordion.</p>`),
			want: []Entry{
				{Question: "How long is delivery?", Answer: "Two days.", URL: page, Source: SourceHeading},
				{Question: "Can I return items?", Answer: "Within a month.", URL: page, Source: SourceHeading},
			}},
		{name: "bold paragraphs and anchors", html: faqSection(`
			<h3>Frequently Asked Questions</h3>
			<a name="declare"></a>
			<p><strong>How do I declare my major?</strong></p><p>Apply to the college.</p><p>Then enrol.</p>
			<p><b>Q: Will I have time for other courses?</b></p><p>A: Some.</p>
			<p><strong>Note</strong></p><p>Not part of the answer.</p>
			<p><strong>Tip</strong>: bold with text is not a heading?</p>
			<h3>Admission</h3><p>Apply early.</p>`),
			want: []Entry{
				{Question: "How do I declare my major?", Answer: "Apply to the college.\n\nThen enrol.", URL: page + "#declare", Source: SourceHeading},
				{Question: "Will I have time for other courses?", Answer: "Some.", URL: page, Source: SourceHeading},
			}},
		{name: "bold run-in questions", html: faqSection(`
			<h2 id="faqs">FAQs</h2>
			<p><strong>Can anyone edit a page?</strong> Only people with a signed CLA.</p><p>Anyone may comment.</p>
			<p><b>Is it backed up?</b> Yes.</p>
			<ul><li><strong>How do I archive a release?</strong> Delete it; it is archived already.</li><li>Another point.</li></ul>
			<p><strong>Note:</strong> bold without a question mark opens no question.</p>`),
			want: []Entry{
				{Question: "Can anyone edit a page?", Answer: "Only people with a signed CLA.\n\nAnyone may comment.", URL: page, Source: SourceHeading},
				// The list holds a question, so the answer before it ends there.
				{Question: "Is it backed up?", Answer: "Yes.", URL: page, Source: SourceHeading},
				{Question: "How do I archive a release?", Answer: "Delete it; it is archived already.", URL: page, Source: SourceHeading},
			}},
		{name: "not questions, links, empty answers", html: faqSection(`
			<h2>FAQ</h2>
			<h3>How to install</h3><p>Steps.</p>
			<h3>Who we are</h3><p>A team.</p>
			<h3>May 2024 releases</h3><p>Two.</p>
			<h3><a href="/blog/buildbot">What can the buildbot do for you?</a></h3><p>A teaser.</p>
			<h3>Is there an empty one?</h3>
			<h3>Is the permalink dropped?<a class="headerlink" href="#perma">¶</a></h3><p>It is.</p>`),
			want: []Entry{{Question: "Is the permalink dropped?", Answer: "It is.", URL: page, Source: SourceHeading}}},
		{name: "microdata and a wrapper per entry", html: faqSection(`
			<div itemscope itemtype="https://schema.org/FAQPage">
			 <div id="faq-question-1" itemscope itemprop="mainEntity" itemtype="https://schema.org/Question">
			  <h3 itemprop="name">What is the return window?</h3>
			  <div itemscope itemprop="acceptedAnswer" itemtype="https://schema.org/Answer"><div itemprop="text"><p>Thirty days.</p></div></div>
			 </div>
			</div>`),
			want: []Entry{{Question: "What is the return window?", Answer: "Thirty days.", URL: page + "#faq-question-1", Source: SourceHeading}}},
		{name: "hr and parent end the answer", html: faqSection(`
			<section class="faq"><h3>Is it open source?</h3><p>Yes.</p></section><p>Unrelated footer-ish text.</p>
			<div class="faq"><h3>Is it fast?</h3><p>Very.</p><hr><p>A new topic.</p></div>`),
			want: []Entry{
				{Question: "Is it open source?", Answer: "Yes.", URL: page, Source: SourceHeading},
				{Question: "Is it fast?", Answer: "Very.", URL: page, Source: SourceHeading},
			}},
		{name: "long answer cut at a sentence", html: faqSection(`<h2>FAQ</h2><h3>Why so long?</h3><p>` + long + `</p>`),
			want: []Entry{{Question: "Why so long?", Answer: strings.TrimSpace(long[:40*37]), URL: page, Source: SourceHeading}}},
	}
}

func chromeTests() []extractTest {
	return []extractTest{
		{name: "nav header footer aside", html: `<html><head><title>FAQ</title></head><body>
			<header><details><summary>How do I log in?</summary><p>Top right.</p></details></header>
			<nav><h2>Can I browse?</h2><p>Menu.</p><dl><dt>Who are we?</dt><dd>Us.</dd></dl></nav>
			<div role="navigation"><details><summary>What is here?</summary>Links.</details></div>
			<main><h2>Is this kept?</h2><p>Yes, it is content.</p></main>
			<aside><h2>Did you know?</h2><p>A tip.</p></aside>
			<footer><h3>Need help?</h3><p>Call us.</p><details><summary>Is there a phone?</summary>Yes.</details></footer>
			<div id="footer"><details><summary>Who made this?</summary>A team.</details></div>
			</body></html>`,
			want: []Entry{{Question: "Is this kept?", Answer: "Yes, it is content.", URL: page, Source: SourceHeading}}},
		{name: "article header is content, its footer is not", html: `<title>Help</title><article><header><h2>FAQ</h2></header>
			<h3>Is the article header content?</h3><p>It is.</p><footer><p>Posted in 2024.</p></footer></article>`,
			want: []Entry{{Question: "Is the article header content?", Answer: "It is.", URL: page, Source: SourceHeading}}},
		{name: "json-ld in the footer still counts", html: `<body><footer><script type="application/ld+json">
			{"@type":"FAQPage","mainEntity":{"@type":"Question","name":"Is this read?","acceptedAnswer":{"text":"Yes."}}}</script></footer></body>`,
			want: []Entry{{Question: "Is this read?", Answer: "Yes.", URL: page, Source: SourceJSONLD}}},
	}
}

func mixedTests() []extractTest {
	data := `<script type="application/ld+json">{"@type":"FAQPage","mainEntity":[
		{"@type":"Question","name":"How do I pay?","acceptedAnswer":{"text":"By card."}},
		{"@type":"Question","name":"Can I cancel?","acceptedAnswer":{"text":"Yes, any time."}}]}</script>`
	return []extractTest{
		{name: "mixed page in document order", html: `<html><head><title>Help centre</title></head><body><main>
			<details><summary>Is there a trial?</summary>Thirty days.</details>
			<h2>Frequently asked questions</h2>
			<h3>Who are you?</h3><p>A small company.</p>
			<dl><dt>Where are you?</dt><dd>Lyon.</dd></dl>
			<h3>Do you ship?</h3><p>Yes.</p>
			</main>` + strings.Replace(data, "How do I pay?", "What is the price?", 1) + `</body></html>`,
			want: []Entry{
				{Question: "Is there a trial?", Answer: "Thirty days.", URL: page, Source: SourceDetails},
				{Question: "Who are you?", Answer: "A small company.", URL: page, Source: SourceHeading},
				{Question: "Where are you?", Answer: "Lyon.", URL: page, Source: SourceDL},
				{Question: "Do you ship?", Answer: "Yes.", URL: page, Source: SourceHeading},
				{Question: "What is the price?", Answer: "By card.", URL: page, Source: SourceJSONLD},
				{Question: "Can I cancel?", Answer: "Yes, any time.", URL: page, Source: SourceJSONLD},
			}},
		{name: "json-ld and details: the first, with the fragment", html: `<head>` + data + `</head><body>
			<details id="pay"><summary>How do I pay</summary><p>By card or by bank transfer.</p></details>
			<details><summary>how do i pay?</summary><p>Again.</p></details></body>`,
			want: []Entry{
				{Question: "How do I pay?", Answer: "By card.", URL: page + "#pay", Source: SourceJSONLD},
				{Question: "Can I cancel?", Answer: "Yes, any time.", URL: page, Source: SourceJSONLD},
			}},
		{name: "heading and json-ld: the json-ld answer at the heading's place", html: `<body><div class="faq">
			<h3 id="cancel">Can I cancel?</h3><p>Yes, any time, from the account page, and more text.</p></div>` + data + `</body>`,
			want: []Entry{
				{Question: "Can I cancel?", Answer: "Yes, any time.", URL: page + "#cancel", Source: SourceJSONLD},
				{Question: "How do I pay?", Answer: "By card.", URL: page, Source: SourceJSONLD},
			}},
	}
}

func TestExtractJSONLD(t *testing.T) { runExtractTests(t, jsonldTests()) }

func TestExtractDetails(t *testing.T) { runExtractTests(t, detailsTests()) }

func TestExtractDL(t *testing.T) { runExtractTests(t, dlTests()) }

func TestExtractHeadings(t *testing.T) { runExtractTests(t, headingTests()) }

func TestExtractChromeIgnored(t *testing.T) { runExtractTests(t, chromeTests()) }

func TestExtractMixedAndDedupe(t *testing.T) { runExtractTests(t, mixedTests()) }

func TestExtractBadURL(t *testing.T) {
	if _, err := Extract([]byte("<p>x</p>"), "http://[::1"); err == nil {
		t.Error("Extract accepted an unparsable page URL")
	}
}

func TestReadsAsQuestion(t *testing.T) {
	for _, tt := range []struct {
		q    string
		want bool
	}{
		{"How do I apply?", true},
		{"Which Infra email address??", true},
		{"Is it \"free?\"", true},
		{"料金はいくらですか？", true},
		{"How do I apply", true},
		{"What's new in version 2", true},
		{"Can I pay by card", true},
		{"Is there a fee", true},
		{"Who is eligible", true},
		{"Refunds?", false},
		{"What's this?", false},
		{"What does that mean?", false},
		{"Why is it so?", false},
		{"Did you know?", true},
		{"Where are you?", true},
		{"Is it?", false},
		{"Why?", false},
		{"How to apply", false},
		{"What we do", false},
		{"Who we are", false},
		{"May 2024 releases", false},
		{"Do not reply", false},
		{"Pricing and plans", false},
		{"What's new", false},
		{"", false},
		{strings.Repeat("word ", 51) + "end?", false},
		{"How do " + strings.Repeat("we ", 30), false},
	} {
		if got := readsAsQuestion(tt.q); got != tt.want {
			t.Errorf("readsAsQuestion(%q) = %v, want %v", tt.q, got, tt.want)
		}
	}
}

func TestCleanQuestion(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"  Q: How do I apply? ", "How do I apply?"},
		{"Q1. Is it free?", "Is it free?"},
		{"Question 3 - Where?", "Where?"},
		{"12. Can I pay?", "Can I pay?"},
		{"Is it done?¶", "Is it done?"},
		{"Quick question?", "Quick question?"},
		{"2024 plans?", "2024 plans?"},
		{"Q:Why?", "Why?"},
		{"Q-tips?", "Q-tips?"},
		{"3.5 mm jacks?", "3.5 mm jacks?"},
		{"Question: what now?", "what now?"},
	} {
		if got := cleanQuestion(tt.in); got != tt.want {
			t.Errorf("cleanQuestion(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCutAnswer(t *testing.T) {
	for _, tt := range []struct {
		in   string
		max  int
		want string
	}{
		{"Short.", 100, "Short."},
		{"One sentence here. Two sentence here. Three.", 40, "One sentence here. Two sentence here."},
		{"No sentence boundary in this rather long run of words", 30, "No sentence boundary in this…"},
		{"First line of it\nsecond line that runs on", 30, "First line of it"},
		{"Ünïcödé wörds ärë cüt ät rünë böündärïës", 21, "Ünïcödé wörds…"},
	} {
		got := cutAnswer(tt.in, tt.max)
		if got != tt.want {
			t.Errorf("cutAnswer(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
		if len(got) > tt.max+len("…") {
			t.Errorf("cutAnswer(%q, %d) is %d bytes", tt.in, tt.max, len(got))
		}
	}
}

func TestQuestionKey(t *testing.T) {
	if a, b := questionKey("How do I  pay?"), questionKey("how do i pay"); a != b || a != "how do i pay" {
		t.Errorf("keys %q and %q", a, b)
	}
	if questionKey("Can I pay?") == questionKey("Can I play?") {
		t.Error("different questions share a key")
	}
}

// TestMayHaveFAQ checks the scan that spares most pages a parse: it lets through every form the extraction
// reacts to, entities included, and stops a page with none.
func TestMayHaveFAQ(t *testing.T) {
	for _, page := range []string{
		`<h2>FAQ</h2>`, `<div class="faq-item">`, `<script type="application/ld+json">{"@type":"FAQPage"}</script>`,
		`<h2>Frequently Asked Questions</h2>`, `<details><summary>x</summary></details>`, `<dl><dt>a</dt></dl>`,
		`<h2>Common
		questions</h2>`, `<h2>Commonly asked questions</h2>`, `<h2>Questions &amp; Answers</h2>`, `<h2>Q&amp;A</h2>`,
		`<h2>Q &#38; A</h2>`, `<h2>Q and A</h2>`, `<h2>Questions and answers</h2>`,
	} {
		if !mayHaveFAQ([]byte(page), "/x/") {
			t.Errorf("mayHaveFAQ(%q) = false", page)
		}
	}
	if !mayHaveFAQ([]byte(`<p>nothing</p>`), "/help/faq.html") {
		t.Error("a FAQ path must pass")
	}
	if mayHaveFAQ([]byte(`<h2>How do I apply?</h2><p>Questions? Write to us. Quality assurance.</p>`), "/apply/") {
		t.Error("a page without FAQ words, details or dl must be skipped")
	}
}
