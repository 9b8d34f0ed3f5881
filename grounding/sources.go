package grounding

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/server"
)

// sourcesFilter removes invented links and escapes raw HTML as the answer streams (see AnswerFilter) and ends it with the Sources list of the pages the
// answer cited; once its trailer is written it reports those pages as annotations and, when asked to, as Open WebUI
// source events.
type sourcesFilter struct {
	links  *AnswerFilter
	res    *retrieval.Result
	max    int
	events bool
	answer strings.Builder
	cited  []Source
}

var _ server.Citer = (*sourcesFilter)(nil)

func (f *sourcesFilter) Filter(delta string) string {
	out := f.links.Write(delta)
	f.answer.WriteString(out)
	return out
}

func (f *sourcesFilter) Trailer() string {
	rest := f.links.Flush()
	f.answer.WriteString(rest)
	f.cited = Cited(f.answer.String(), f.res, f.max)
	list := SourcesMarkdownIn(replyLanguage(f.res), f.cited)
	f.answer.WriteString(list)
	return rest + list
}

// Annotations implements server.Citer: one url_citation per page of the Sources list, spanning its link there.
func (f *sourcesFilter) Annotations() []compat.Annotation {
	return annotate(f.answer.String(), f.cited)
}

// Events implements server.Citer: the source events of the cited pages, or nil when none go out.
func (f *sourcesFilter) Events() []json.RawMessage {
	if !f.events {
		return nil
	}
	return SourceEvents(f.res, f.cited)
}

// annotate returns the url_citation annotations of the pages text lists: for each, the span of its last markdown
// link "[title](url)" in text (the Sources list comes last), counted in characters as OpenAI counts them. A page
// text does not link to is left out.
func annotate(text string, pages []Source) []compat.Annotation {
	var out []compat.Annotation
	for _, p := range pages {
		link := "[" + mdText(p.Title) + "](" + p.URL + ")"
		i := strings.LastIndex(text, link)
		if i < 0 {
			continue
		}
		start := utf8.RuneCountInString(text[:i])
		out = append(out, compat.Citation(p.URL, p.Title, start, start+utf8.RuneCountInString(link)))
	}
	return out
}

// SourceEvents are Open WebUI's source events for the cited pages, each with its passages from the context, which
// Open WebUI shows as citations under the answer. Each frame also carries an empty "choices" array, so clients that
// read every frame as a chat.completion.chunk (the OpenAI SDKs' stream helpers) skip it instead of failing.
func SourceEvents(res *retrieval.Result, cited []Source) []json.RawMessage {
	type meta struct {
		Source string `json:"source"`
		Name   string `json:"name"`
		URL    string `json:"url"`
	}
	type source struct {
		Name string `json:"name"`
		ID   string `json:"id"`
		URL  string `json:"url"`
	}
	type data struct {
		Source   source   `json:"source"`
		Document []string `json:"document"`
		Metadata []meta   `json:"metadata"`
	}
	type event struct {
		Type string `json:"type"`
		Data data   `json:"data"`
	}
	type frame struct {
		Choices []struct{} `json:"choices"`
		Event   event      `json:"event"`
	}
	var out []json.RawMessage
	for _, p := range cited {
		d := data{Source: source{Name: p.Title, ID: p.URL, URL: p.URL}, Document: []string{}, Metadata: []meta{}}
		for _, c := range res.Chunks {
			if c.URL == p.URL {
				d.Document = append(d.Document, c.Text)
				d.Metadata = append(d.Metadata, meta{Source: p.URL, Name: p.Title, URL: p.URL})
			}
		}
		if len(d.Document) == 0 { // a page cited by its summary alone
			d.Document = append(d.Document, p.Title)
			d.Metadata = append(d.Metadata, meta{Source: p.URL, Name: p.Title, URL: p.URL})
		}
		b, err := compat.Marshal(frame{Choices: []struct{}{}, Event: event{Type: "source", Data: d}})
		if err == nil {
			out = append(out, b)
		}
	}
	return out
}
