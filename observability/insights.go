package observability

import "github.com/prometheus/client_golang/prometheus"

// The label values of the question log's metrics: outcomes of answers, ratings of feedback, and why questions
// were not logged. Each starts at zero, so a dashboard shows a rate of 0 rather than no data.
var (
	answerOutcomes = []string{"answered", "unanswered", "faq"}
	feedbackRates  = []string{"up", "down"}
	lostReasons    = []string{"buffer_full", "store_error"}
)

// insightsCollectors builds the question log's metrics.
func (m *Metrics) insightsCollectors() []prometheus.Collector {
	m.answers = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ragproxy_answers_total",
		Help: "Visitors' questions answered, by outcome: answered (from the site's pages), unanswered (nothing found, or the answer says it does not know) or faq (an FAQ entry answered directly).",
	}, []string{"outcome"})
	m.feedback = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ragproxy_feedback_total",
		Help: "Ratings of answers sent to POST /v1/feedback, by rating: up or down.",
	}, []string{"rating"})
	m.questionsLost = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ragproxy_question_log_dropped_total",
		Help: "Questions the question log could not keep, by reason: buffer_full (the store is slower than the questions come) or store_error (the insights database failed); the answers went out regardless.",
	}, []string{"reason"})
	for _, o := range answerOutcomes {
		m.answers.WithLabelValues(o)
	}
	for _, r := range feedbackRates {
		m.feedback.WithLabelValues(r)
	}
	for _, r := range lostReasons {
		m.questionsLost.WithLabelValues(r)
	}
	return []prometheus.Collector{m.answers, m.feedback, m.questionsLost}
}

// bounded returns v when it is one of known, else "other", so a label never grows without bound.
func bounded(v string, known []string) string {
	for _, k := range known {
		if v == k {
			return v
		}
	}
	return "other"
}

// Answer counts an answered question by its outcome (insights.Metrics).
func (m *Metrics) Answer(outcome string) {
	m.answers.WithLabelValues(bounded(outcome, answerOutcomes)).Inc()
}

// Feedback counts a rating of an answer (insights.Metrics).
func (m *Metrics) Feedback(rating string) {
	m.feedback.WithLabelValues(bounded(rating, feedbackRates)).Inc()
}

// QuestionsDropped counts questions the question log lost, by reason (insights.Metrics).
func (m *Metrics) QuestionsDropped(reason string, n int) {
	m.questionsLost.WithLabelValues(bounded(reason, lostReasons)).Add(float64(n))
}
