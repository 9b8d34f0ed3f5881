// Package insights keeps what a site's visitors ask and what they thought of the answers: the question log,
// feedback on answers and the FAQ entries an operator adds, in a database (SQLite by default, PostgreSQL for
// several replicas), and reports from them for the site's owners. It is safe for concurrent use.
package insights

import (
	"context"
	"errors"
	"time"
)

// The outcomes of a question.
const (
	// Answered: answered from the site's pages.
	Answered = "answered"
	// Unanswered: nothing relevant was found, or the answer says it does not know.
	Unanswered = "unanswered"
	// FAQ: answered directly from an FAQ entry.
	FAQ = "faq"
)

// Question is one logged question and how it was answered.
type Question struct {
	// ID is the store's id (set when read back).
	ID int64 `json:"id"`
	// At is when the question was asked.
	At time.Time `json:"at"`
	// Model is the model (assistant) the client asked.
	Model string `json:"model"`
	// Question is the visitor's latest message; Standalone the analysis' standalone form of it, when it differs
	// (a follow-up completed from the conversation).
	Question   string `json:"question"`
	Standalone string `json:"standalone,omitempty"`
	// Outcome is Answered, Unanswered or FAQ.
	Outcome string `json:"outcome"`
	// Confidence is the retrieval's confidence (0 for an FAQ answer, which ran no retrieval).
	Confidence float64 `json:"confidence"`
	// Pages are the URLs of the pages the answer cited, in order.
	Pages []string `json:"pages"`
	// Topic is where in the site the question belongs: the section and community of the best page found.
	Topic string `json:"topic,omitempty"`
	// Latency is the time from arrival to the end of the answer.
	Latency time.Duration `json:"-"`
	// PromptTokens and CompletionTokens are the answer's usage; Cost its estimated price in US dollars.
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	Cost             float64 `json:"cost_usd"`
	// ResponseID is the chat completion's id, which feedback names.
	ResponseID string `json:"response_id"`
	// Key is the client key's masked form ("" without client auth).
	Key string `json:"key,omitempty"`
}

// Feedback is a visitor's rating of one answer.
type Feedback struct {
	ResponseID string    `json:"id"`
	Rating     string    `json:"rating"`
	Comment    string    `json:"comment,omitempty"`
	At         time.Time `json:"at"`
}

// The ratings of Feedback.
const (
	Up   = "up"
	Down = "down"
)

// FAQEntry is an FAQ entry an operator added.
type FAQEntry struct {
	ID       int64  `json:"id"`
	Question string `json:"question"`
	Answer   string `json:"answer"`
	URL      string `json:"url"`
	Title    string `json:"title,omitempty"`
	// Lang is the language the entry is written in, a BCP 47 tag ("de", "pt-BR"); empty: the language its text is
	// surely written in, else the site's main language.
	Lang      string    `json:"lang,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// ErrUnknownResponse is AddFeedback's error for a response id no logged question has.
var ErrUnknownResponse = errors.New("no logged answer has this id")

// ErrNotFound is the error for an FAQ entry that does not exist.
var ErrNotFound = errors.New("not found")

// QuestionWriter stores logged questions.
type QuestionWriter interface {
	// AddQuestions stores a batch of questions and their share of the per-day aggregates, in one transaction.
	AddQuestions(ctx context.Context, qs []Question) error
}

// Store is a database of questions, feedback and FAQ entries. Its data older than its retention is deleted by
// the store itself (at open, then at most hourly as questions are written).
type Store interface {
	QuestionWriter
	// AddFeedback stores feedback on a logged answer; ErrUnknownResponse when no question has its id.
	AddFeedback(ctx context.Context, f Feedback) error
	// Report summarises the questions and feedback of a period (see Report).
	Report(ctx context.Context, q ReportQuery) (*Report, error)
	// Questions lists stored questions, newest first.
	Questions(ctx context.Context, q ListQuery) (*QuestionList, error)
	// AddFAQ stores an entry and returns it with its id; FAQEntries lists them oldest first; DeleteFAQ removes
	// one (ErrNotFound when there is none).
	AddFAQ(ctx context.Context, e FAQEntry) (FAQEntry, error)
	FAQEntries(ctx context.Context) ([]FAQEntry, error)
	DeleteFAQ(ctx context.Context, id int64) error
	// Prune deletes questions, feedback and aggregates from before the given time.
	Prune(ctx context.Context, before time.Time) error
	// Ping checks that the database answers.
	Ping(ctx context.Context) error
	// Close releases the database.
	Close() error
}

// DefaultRetention is how long a store keeps questions and feedback by default.
const DefaultRetention = 90 * 24 * time.Hour

// Config configures a store.
type Config struct {
	// Retention is how long questions and feedback are kept; default DefaultRetention. Negative: forever.
	Retention time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
}

func (c Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c Config) retention() time.Duration {
	if c.Retention == 0 {
		return DefaultRetention
	}
	return c.Retention
}
