package insights

import (
	"fmt"
	"html"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes a report for a terminal: the totals, then the lists, each a short table.
func WriteText(w io.Writer, r *Report) error {
	t := r.Totals
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Insights %s to %s", r.From, r.To)
	if r.Model != "" {
		fmt.Fprintf(tw, " (%s)", r.Model)
	}
	fmt.Fprintf(tw, "\n\nquestions\t%d\nanswered\t%d\t%.1f%%\nunanswered\t%d\t%.1f%%\nfaq\t%d\t%.1f%%\nlow confidence\t%d\n",
		t.Questions, t.Answered, 100*t.AnsweredShare, t.Unanswered, 100*t.UnansweredShare, t.FAQ, 100*t.FAQShare, t.LowConfidence)
	fmt.Fprintf(tw, "thumbs up / down\t%d / %d\nlatency p50 / p95\t%.0f / %.0f ms\ntokens in / out\t%d / %d\ncost\t$%.4f\n",
		t.Up, t.Down, t.LatencyP50, t.LatencyP95, t.PromptTokens, t.CompletionTokens, t.Cost)
	section := func(title string) { fmt.Fprintf(tw, "\n%s\n", title) }
	section("Most asked")
	for _, g := range r.Top {
		fmt.Fprintf(tw, "%d\t%s\t%s\n", g.Count, oneLine(g.Question), g.Topic)
	}
	section("Not answered well, by topic")
	for _, tp := range r.Gaps {
		fmt.Fprintf(tw, "%d\t%s\n", tp.Count, tp.Topic)
		for _, g := range tp.Questions {
			fmt.Fprintf(tw, "\t%s\t%d unanswered, %d low confidence\n", oneLine(g.Question), g.Unanswered, g.LowConfidence)
		}
	}
	section("Most cited pages")
	for _, c := range r.Cited {
		fmt.Fprintf(tw, "%d\t%s\n", c.Count, c.URL)
	}
	if len(r.Never) > 0 {
		section(fmt.Sprintf("Pages never cited (%d)", len(r.Never)))
		for _, u := range r.Never {
			fmt.Fprintf(tw, "\t%s\n", u)
		}
	}
	section("Downvoted answers")
	for _, c := range r.Downvote {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.At.Format("2006-01-02 15:04"), oneLine(c.Question), oneLine(c.Comment))
	}
	return tw.Flush()
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 100 {
		return string(r[:99]) + "…"
	}
	return s
}

// bar is one bar of the series chart, in SVG units.
type bar struct {
	X, Width                     float64
	Answered, Unanswered, FAQ    float64 // heights
	YAnswered, YUnanswered, YFAQ float64
	Label                        string
}

// chartHeight is the height of the series chart's bars area.
const chartHeight = 160.0

// bars lays the per-day series out as stacked bars.
func bars(days []Day) []bar {
	var most int64 = 1
	for _, d := range days {
		most = max(most, d.Questions)
	}
	width := 640.0 / float64(max(len(days), 1))
	out := make([]bar, len(days))
	for i, d := range days {
		scale := chartHeight / float64(most)
		b := bar{X: float64(i) * width, Width: max(width-2, 1), Label: d.Day + ": " + fmt.Sprintf("%d questions, %d answered, %d unanswered, %d FAQ", d.Questions, d.Answered, d.Unanswered, d.FAQ)}
		b.Answered, b.Unanswered, b.FAQ = float64(d.Answered)*scale, float64(d.Unanswered)*scale, float64(d.FAQ)*scale
		b.YAnswered = chartHeight - b.Answered
		b.YUnanswered = b.YAnswered - b.Unanswered
		b.YFAQ = b.YUnanswered - b.FAQ
		out[i] = b
	}
	return out
}

// The HTML report is written with html.EscapeString rather than html/template: executing a template makes the
// linker keep every exported method of every type in the binary (a template may call any method by name).

// esc escapes text for HTML element content and quoted attribute values.
func esc(s string) string { return html.EscapeString(s) }

// href is a link target for the page: http and https URLs only, anything else (a javascript: URL a page might
// carry) the inert "#ZgotmplZ", as html/template writes an unsafe URL.
func href(u string) string {
	if l := strings.ToLower(strings.TrimSpace(u)); strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") {
		return esc(u)
	}
	return "#ZgotmplZ"
}

const reportStyle = `<style>
body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1.5rem}td,th{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #ddd;vertical-align:top}
td.n{text-align:right;width:5rem}.k{display:inline-block;width:.8rem;height:.8rem;margin:0 .3rem 0 1rem}
.a{fill:#2f7d4f;background:#2f7d4f}.u{fill:#c0392b;background:#c0392b}.f{fill:#2d6cb5;background:#2d6cb5}
</style>`

// WriteSVG writes the report's per-day series as an SVG image: stacked bars of answered (green), unanswered
// (red) and FAQ (blue) questions, each day's figures in its title. Its colours are attributes, so it looks the
// same inline and as an image.
func WriteSVG(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 640 %v" width="640" height="%v" role="img" aria-label="questions per day">`,
		chartHeight, chartHeight)
	for _, x := range bars(r.Days) {
		fmt.Fprintf(&b, `<g><title>%s</title>`+"\n"+`<rect fill="#2f7d4f" x="%v" y="%v" width="%v" height="%v"/><rect fill="#c0392b" x="%v" y="%v" width="%v" height="%v"/><rect fill="#2d6cb5" x="%v" y="%v" width="%v" height="%v"/></g>`,
			esc(x.Label), x.X, x.YAnswered, x.Width, x.Answered, x.X, x.YUnanswered, x.Width, x.Unanswered, x.X, x.YFAQ, x.Width, x.FAQ)
	}
	b.WriteString("</svg>")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteHTML writes a report as one self-contained HTML page: its series drawn as SVG, no script, every text
// escaped.
func WriteHTML(w io.Writer, r *Report) error {
	var b strings.Builder
	pct := func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }
	t := r.Totals
	fmt.Fprintf(&b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Insights %s to %s</title>\n%s</head><body>\n",
		esc(r.From), esc(r.To), reportStyle)
	fmt.Fprintf(&b, "<h1>Insights %s to %s", esc(r.From), esc(r.To))
	if r.Model != "" {
		fmt.Fprintf(&b, " (%s)", esc(r.Model))
	}
	b.WriteString("</h1>\n")
	fmt.Fprintf(&b, "<table><tr><th>questions</th><td>%d</td><th>answered</th><td>%d (%s)</td></tr>\n", t.Questions, t.Answered, pct(t.AnsweredShare))
	fmt.Fprintf(&b, "<tr><th>unanswered</th><td>%d (%s)</td><th>FAQ</th><td>%d (%s)</td></tr>\n", t.Unanswered, pct(t.UnansweredShare), t.FAQ, pct(t.FAQShare))
	fmt.Fprintf(&b, "<tr><th>thumbs up / down</th><td>%d / %d</td><th>low confidence</th><td>%d</td></tr>\n", t.Up, t.Down, t.LowConfidence)
	fmt.Fprintf(&b, "<tr><th>latency p50 / p95</th><td>%.0f ms / %.0f ms</td><th>tokens in / out, cost</th><td>%d / %d, $%.4f</td></tr></table>\n",
		t.LatencyP50, t.LatencyP95, t.PromptTokens, t.CompletionTokens, t.Cost)
	b.WriteString("<h2>Questions per day</h2>\n<p><span class=\"k a\"></span>answered<span class=\"k u\"></span>unanswered<span class=\"k f\"></span>FAQ</p>\n")
	if err := WriteSVG(&b, r); err != nil {
		return err
	}
	b.WriteString("\n<h2>Most asked</h2><table>")
	for _, g := range r.Top {
		fmt.Fprintf(&b, `<tr><td class="n">%d</td><td>%s</td><td>%s</td></tr>`, g.Count, esc(g.Question), esc(g.Topic))
	}
	b.WriteString("</table>\n<h2>Not answered well, by topic</h2><table>")
	for _, tp := range r.Gaps {
		fmt.Fprintf(&b, `<tr><th class="n">%d</th><th colspan="2">%s</th></tr>`, tp.Count, esc(tp.Topic))
		for _, g := range tp.Questions {
			fmt.Fprintf(&b, `<tr><td class="n">%d</td><td>%s</td><td>%d unanswered, %d low confidence</td></tr>`, g.Count, esc(g.Question), g.Unanswered, g.LowConfidence)
		}
	}
	b.WriteString("</table>\n<h2>Most cited pages</h2><table>")
	for _, c := range r.Cited {
		fmt.Fprintf(&b, `<tr><td class="n">%d</td><td><a href="%s">%s</a></td></tr>`, c.Count, href(c.URL), esc(c.URL))
	}
	b.WriteString("</table>\n")
	if len(r.Never) > 0 {
		fmt.Fprintf(&b, "<h2>Pages never cited (%d)</h2><table>", len(r.Never))
		for _, u := range r.Never {
			fmt.Fprintf(&b, `<tr><td><a href="%s">%s</a></td></tr>`, href(u), esc(u))
		}
		b.WriteString("</table>")
	}
	b.WriteString("\n<h2>Downvoted answers</h2><table>")
	for _, c := range r.Downvote {
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td></tr>", c.At.Format("2006-01-02 15:04"), esc(c.Question), esc(c.Comment))
	}
	b.WriteString("</table>\n</body></html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
