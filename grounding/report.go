package grounding

import (
	"net/url"
	"strings"

	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/server"
)

// report describes a question for the question log: as analysis read it, with the model's standalone rewrite
// when it differs (a follow-up completed from the conversation), the retrieval's confidence and the part of
// the site its best page is in.
func report(a retrieval.Analysis, res *retrieval.Result, outcome string) *server.QuestionReport {
	q := &server.QuestionReport{Question: a.Question, Standalone: a.Standalone, Outcome: outcome}
	if a.Source == "llm" && len(a.Rewrites) > 0 && !strings.EqualFold(strings.TrimSpace(a.Rewrites[0]), strings.TrimSpace(a.Question)) {
		q.Standalone = a.Rewrites[0]
	}
	if res != nil {
		q.Confidence = res.Confidence
		if len(res.Pages) > 0 {
			q.Topic = Topic(res.Pages[0].URL)
		}
	}
	return q
}

// Topic is the section of the site a page belongs to, as its owners arranged it: the first two directories of
// its path ("/en/library/" for https://www.example.edu/en/library/hours.html), "/" for a page at the top.
func Topic(page string) string {
	u, err := url.Parse(page)
	if err != nil {
		return ""
	}
	dirs := strings.Split(strings.Trim(u.Path, "/"), "/")
	if !strings.HasSuffix(u.Path, "/") && len(dirs) > 0 {
		dirs = dirs[:len(dirs)-1] // the page's own file name
	}
	if len(dirs) > 2 {
		dirs = dirs[:2]
	}
	if len(dirs) == 0 || dirs[0] == "" {
		return "/"
	}
	return "/" + strings.Join(dirs, "/") + "/"
}
