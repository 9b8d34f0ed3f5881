package insights

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func renderReport() *Report {
	return &Report{Object: "insights", From: "2026-10-04", To: "2026-11-02",
		Totals:   Totals{Questions: 4, Answered: 2, Unanswered: 1, FAQ: 1, AnsweredShare: 0.5, UnansweredShare: 0.25, FAQShare: 0.25, Down: 1},
		Days:     []Day{{Day: "2026-11-01", Questions: 1, Answered: 1}, {Day: "2026-11-02", Questions: 3, Answered: 1, Unanswered: 1, FAQ: 1}},
		Top:      []Group{{Question: `<script>alert(1)</script> hours?`, Count: 2}},
		Gaps:     []Topic{{Topic: "/transport/", Count: 1, Questions: []Group{{Question: "shuttle?", Count: 1, Unanswered: 1}}}},
		Cited:    []Cited{{URL: "javascript:alert(1)", Count: 1}},
		Never:    []string{"https://u.example/maps/"},
		Downvote: []Comment{{At: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC), Question: "shuttle?", Comment: "wrong"}}}
}

func TestWriteHTML(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, renderReport()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt; hours?", "Pages never cited (1)", "/transport/",
		`href="#ZgotmplZ"`, "2026-11-02: 3 questions, 1 answered, 1 unanswered, 1 FAQ", "50.0%", "wrong"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>") {
		t.Error("the page holds a script")
	}
	// The busiest day's bars fill the chart: answered, unanswered and FAQ a third each.
	bs := bars(renderReport().Days)
	if b := bs[1]; !approx(b.Answered+b.Unanswered+b.FAQ, chartHeight) || !approx(b.YFAQ, 0) || !approx(bs[0].Answered, chartHeight/3) {
		t.Errorf("bars %+v", bs)
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, renderReport()); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{"Insights 2026-10-04 to 2026-11-02", "answered           2  50.0%", "thumbs up / down   0 / 1", "shuttle?", "https://u.example/maps/", "wrong"} {
		if !strings.Contains(text, want) {
			t.Errorf("the text lacks %q:\n%s", want, text)
		}
	}
}
