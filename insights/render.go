package insights

import (
	"fmt"
	"html/template"
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

var reportPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"pct": func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) },
	"ms":  func(f float64) string { return fmt.Sprintf("%.0f ms", f) },
	"usd": func(f float64) string { return fmt.Sprintf("$%.4f", f) },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Insights {{.R.From}} to {{.R.To}}</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1f24}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1.5rem}td,th{text-align:left;padding:.25rem .5rem;border-bottom:1px solid #ddd;vertical-align:top}
td.n{text-align:right;width:5rem}.k{display:inline-block;width:.8rem;height:.8rem;margin:0 .3rem 0 1rem}
.a{fill:#2f7d4f;background:#2f7d4f}.u{fill:#c0392b;background:#c0392b}.f{fill:#2d6cb5;background:#2d6cb5}
</style></head><body>
<h1>Insights {{.R.From}} to {{.R.To}}{{with .R.Model}} ({{.}}){{end}}</h1>
<table><tr><th>questions</th><td>{{.R.Totals.Questions}}</td><th>answered</th><td>{{.R.Totals.Answered}} ({{pct .R.Totals.AnsweredShare}})</td></tr>
<tr><th>unanswered</th><td>{{.R.Totals.Unanswered}} ({{pct .R.Totals.UnansweredShare}})</td><th>FAQ</th><td>{{.R.Totals.FAQ}} ({{pct .R.Totals.FAQShare}})</td></tr>
<tr><th>thumbs up / down</th><td>{{.R.Totals.Up}} / {{.R.Totals.Down}}</td><th>low confidence</th><td>{{.R.Totals.LowConfidence}}</td></tr>
<tr><th>latency p50 / p95</th><td>{{ms .R.Totals.LatencyP50}} / {{ms .R.Totals.LatencyP95}}</td><th>tokens in / out, cost</th><td>{{.R.Totals.PromptTokens}} / {{.R.Totals.CompletionTokens}}, {{usd .R.Totals.Cost}}</td></tr></table>
<h2>Questions per day</h2>
<p><span class="k a"></span>answered<span class="k u"></span>unanswered<span class="k f"></span>FAQ</p>
{{template "chart" .}}
<h2>Most asked</h2><table>{{range .R.Top}}<tr><td class="n">{{.Count}}</td><td>{{.Question}}</td><td>{{.Topic}}</td></tr>{{end}}</table>
<h2>Not answered well, by topic</h2><table>{{range .R.Gaps}}<tr><th class="n">{{.Count}}</th><th colspan="2">{{.Topic}}</th></tr>{{range .Questions}}<tr><td class="n">{{.Count}}</td><td>{{.Question}}</td><td>{{.Unanswered}} unanswered, {{.LowConfidence}} low confidence</td></tr>{{end}}{{end}}</table>
<h2>Most cited pages</h2><table>{{range .R.Cited}}<tr><td class="n">{{.Count}}</td><td><a href="{{.URL}}">{{.URL}}</a></td></tr>{{end}}</table>
{{with .R.Never}}<h2>Pages never cited ({{len .}})</h2><table>{{range .}}<tr><td><a href="{{.}}">{{.}}</a></td></tr>{{end}}</table>{{end}}
<h2>Downvoted answers</h2><table>{{range .R.Downvote}}<tr><td>{{.At.Format "2006-01-02 15:04"}}</td><td>{{.Question}}</td><td>{{.Comment}}</td></tr>{{end}}</table>
</body></html>
`))

// chart draws the per-day series as stacked SVG bars; its colours are attributes, so it looks the same inline
// and as an image.
var chart = template.Must(reportPage.New("chart").Parse(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 640 {{.H}}" width="640" height="{{.H}}" role="img" aria-label="questions per day">{{range .Bars}}<g><title>{{.Label}}</title>
<rect fill="#2f7d4f" x="{{.X}}" y="{{.YAnswered}}" width="{{.Width}}" height="{{.Answered}}"/><rect fill="#c0392b" x="{{.X}}" y="{{.YUnanswered}}" width="{{.Width}}" height="{{.Unanswered}}"/><rect fill="#2d6cb5" x="{{.X}}" y="{{.YFAQ}}" width="{{.Width}}" height="{{.FAQ}}"/></g>{{end}}</svg>`))

type chartData struct {
	R    *Report
	Bars []bar
	H    float64
}

// WriteSVG writes the report's per-day series as an SVG image: stacked bars of answered (green), unanswered
// (red) and FAQ (blue) questions, each day's figures in its title.
func WriteSVG(w io.Writer, r *Report) error {
	return chart.Execute(w, chartData{r, bars(r.Days), chartHeight})
}

// WriteHTML writes a report as one self-contained HTML page: its series drawn as SVG, no script, every text
// escaped.
func WriteHTML(w io.Writer, r *Report) error {
	return reportPage.Execute(w, chartData{r, bars(r.Days), chartHeight})
}
