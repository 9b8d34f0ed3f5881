package server

import (
	"context"
	"net/http"
	"time"

	"github.com/ragproxy/ragproxy/compat"
)

// QuestionLog receives every visitor's question once its answer has gone out: the question log of the site's
// owners. LogQuestion is called on the request's path (for a stream, on its writer once the stream ended), so
// it must not block or fail the request: hand the question to a buffer and return. Client tasks (titles, tags,
// autocomplete), failed answers and requests the Grounder reported no question for are not logged.
type QuestionLog interface {
	LogQuestion(ctx context.Context, q Question)
}

// The outcomes a Grounder reports in QuestionReport.Outcome.
const (
	OutcomeAnswered   = "answered"
	OutcomeUnanswered = "unanswered"
	OutcomeFAQ        = "faq"
)

// QuestionReport is what a Grounder found out about a visitor's question (Grounding.Question): the question,
// how it was answered and where in the site it belongs.
type QuestionReport struct {
	// Question is the visitor's latest message as analysis read it; Standalone the analysis' standalone form
	// of it when that differs (a follow-up completed from the conversation).
	Question   string `json:"question"`
	Standalone string `json:"standalone,omitempty"`
	// Outcome is OutcomeAnswered (the answer is grounded in the site's pages; it may still say it does not
	// know), OutcomeUnanswered (nothing relevant was found) or OutcomeFAQ (an FAQ entry answered directly).
	Outcome string `json:"outcome"`
	// Confidence is the retrieval's confidence (0 when none ran).
	Confidence float64 `json:"confidence,omitempty"`
	// Topic names the part of the site the best page found belongs to.
	Topic string `json:"topic,omitempty"`
}

// Question is one answered question, as QuestionLog receives it.
type Question struct {
	QuestionReport
	// RequestID is the request's id; ResponseID the chat completion's id the client got, which feedback names.
	RequestID, ResponseID string
	// Model is the model the client asked for.
	Model string
	// Key is the client key's masked form, "" without client auth.
	Key string
	// At is when the request arrived; Latency the time until its answer ended.
	At      time.Time
	Latency time.Duration
	// Usage is the answer's usage (zero when the upstream reported none).
	Usage compat.Usage
	// Answer is the first answer's text as sent, and Cited the URLs its url_citation annotations name.
	Answer string
	Cited  []string
	// Cached reports an answer replayed from the response cache; Upstream one a model wrote (the answer had a
	// cost), not the Grounder or the cache.
	Cached, Upstream bool
}

// logQuestion hands a finished request's question to the question log: only a user's question the Grounder
// reported, answered in full.
func (s *Server) logQuestion(ctx context.Context, st *chatState, out outcome) {
	if s.cfg.Questions == nil || st.task != "" || out.err != nil || out.status != http.StatusOK || out.clientGone {
		return
	}
	report := out.question
	if report == nil && st.ground != nil {
		report = st.ground.Question
	}
	if report == nil {
		return
	}
	q := Question{QuestionReport: *report, RequestID: st.id, ResponseID: out.id, Model: st.req.Model, At: st.start,
		Latency: time.Since(st.start), Answer: out.content, Cached: st.cache != nil && st.cache.served,
		Upstream: out.served.Upstream != ""}
	if out.usage != nil {
		q.Usage = *out.usage
	}
	if len(s.cfg.APIKeys) > 0 || len(s.cfg.Embed.Keys) > 0 {
		if token, ok := bearerHeader(st.header.Get("Authorization")); ok {
			q.Key = maskKey(token)
		}
	}
	for _, a := range out.cited {
		if a.URLCitation.URL != "" {
			q.Cited = append(q.Cited, a.URLCitation.URL)
		}
	}
	s.cfg.Questions.LogQuestion(ctx, q)
}
