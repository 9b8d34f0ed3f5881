package insights

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/server"
	"github.com/ragproxy/ragproxy/textnorm"
)

// API serves the insights over HTTP: feedback under /v1 (client keys) and the reports and FAQ entries under
// /admin (admin keys).
type API struct {
	// Store holds the questions, feedback and FAQ entries. Required.
	Store Store
	// Log, when set, is flushed before feedback on an id the store does not know yet: the answer may have
	// ended a moment ago, its question still in the log's buffer.
	Log *Log
	// Mode redacts feedback comments like questions; default Redacted.
	Mode Mode
	// Metrics, when set, counts feedback by rating.
	Metrics Metrics
	// Pages, when set, returns the URLs of the served index's pages, for the pages never cited.
	Pages func() []string
	// FAQChanged, when set, is called with every stored FAQ entry after one was added or deleted, so that
	// answers use them at once.
	FAQChanged func(ctx context.Context, entries []FAQEntry) error
}

// ClientRoutes are the routes under /v1: POST /v1/feedback.
func (a *API) ClientRoutes() []server.Route {
	return []server.Route{{Method: http.MethodPost, Path: "/feedback", Handle: a.feedback}}
}

// AdminRoutes are the routes under /admin: the insights report, the stored questions, and the FAQ entries.
func (a *API) AdminRoutes() []server.Route {
	return []server.Route{
		{Method: http.MethodGet, Path: "/insights", Handle: a.report},
		{Method: http.MethodGet, Path: "/insights/questions", Handle: a.questions},
		{Method: http.MethodGet, Path: "/insights/chart.svg", Handle: a.chart},
		{Method: http.MethodGet, Path: "/faq", Handle: a.faqList},
		{Method: http.MethodPost, Path: "/faq", Handle: a.faqAdd},
		{Method: http.MethodDelete, Path: "/faq/:id", Handle: a.faqDelete},
	}
}

// maxComment bounds a feedback comment, in bytes.
const maxComment = 4000

// FeedbackRequest is the body of POST /v1/feedback.
type FeedbackRequest struct {
	ID      string `json:"id"`
	Rating  string `json:"rating"`
	Comment string `json:"comment"`
}

func (a *API) feedback(ctx context.Context, req *server.Request) (any, error) {
	var f FeedbackRequest
	if err := compat.DecodeStrict(req.Body, &f); err != nil {
		return nil, err
	}
	switch {
	case f.ID == "":
		return nil, compat.InvalidRequest("id", "missing_required_parameter", "Missing required parameter: 'id'.")
	case f.Rating != Up && f.Rating != Down:
		return nil, compat.InvalidRequest("rating", "invalid_value", "Invalid value for 'rating': expected 'up' or 'down'.")
	case len(f.Comment) > maxComment:
		return nil, compat.InvalidRequest("comment", "string_above_max_length",
			"Invalid 'comment': string too long. Expected a string with maximum length %d.", maxComment)
	}
	comment := strings.TrimSpace(f.Comment)
	if a.Mode == Redacted {
		comment = Redact(comment)
	}
	fb := Feedback{ResponseID: f.ID, Rating: f.Rating, Comment: comment}
	err := a.Store.AddFeedback(ctx, fb)
	if errors.Is(err, ErrUnknownResponse) && a.Log != nil {
		fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if a.Log.Flush(fctx) == nil {
			err = a.Store.AddFeedback(ctx, fb)
		}
		cancel()
	}
	if errors.Is(err, ErrUnknownResponse) {
		return nil, &compat.APIError{Status: http.StatusNotFound, Type: compat.TypeInvalidRequest, Param: "id",
			Code: "response_not_found", Message: fmt.Sprintf("No answer with id '%s' was found.", f.ID)}
	}
	if err != nil {
		return nil, err
	}
	if a.Metrics != nil {
		a.Metrics.Feedback(f.Rating)
	}
	return map[string]any{"object": "feedback", "id": f.ID, "rating": f.Rating}, nil
}

// ParseSince reads a period: a Go duration ("12h") or a number of days ("30d").
func ParseSince(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("period %q: want a positive number of days (30d) or a duration (12h)", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("period %q: want a positive number of days (30d) or a duration (12h)", s)
	}
	return d, nil
}

// since reads the query's since parameter (default 30 days).
func since(q url.Values) (time.Duration, error) {
	s := q.Get("since")
	if s == "" {
		return 30 * 24 * time.Hour, nil
	}
	d, err := ParseSince(s)
	if err != nil {
		return 0, compat.InvalidRequest("since", "invalid_value", "Invalid 'since': %v.", err)
	}
	return d, nil
}

// intParam reads a positive integer query parameter (0 when absent).
func intParam(q url.Values, name string) (int, error) {
	s := q.Get(name)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, compat.InvalidRequest(name, "invalid_value", "Invalid '%s': expected a positive integer.", name)
	}
	return n, nil
}

func (a *API) report(ctx context.Context, req *server.Request) (any, error) {
	d, err := since(req.Query)
	if err != nil {
		return nil, err
	}
	limit, err := intParam(req.Query, "limit")
	if err != nil {
		return nil, err
	}
	q := ReportQuery{Since: d, Model: req.Query.Get("assistant"), Limit: min(limit, 1000)}
	if a.Pages != nil {
		q.Pages = a.Pages()
	}
	return a.Store.Report(ctx, q)
}

// chart draws the report's per-day series as an SVG image (see WriteSVG).
func (a *API) chart(ctx context.Context, req *server.Request) (any, error) {
	d, err := since(req.Query)
	if err != nil {
		return nil, err
	}
	r, err := a.Store.Report(ctx, ReportQuery{Since: d, Model: req.Query.Get("assistant"), Limit: 1})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := WriteSVG(&b, r); err != nil {
		return nil, err
	}
	return server.Raw{ContentType: "image/svg+xml", Body: b.Bytes()}, nil
}

func (a *API) questions(ctx context.Context, req *server.Request) (any, error) {
	d, err := since(req.Query)
	if err != nil {
		return nil, err
	}
	q := ListQuery{Since: d, Outcome: req.Query.Get("outcome"), Model: req.Query.Get("assistant")}
	switch q.Outcome {
	case "", Answered, Unanswered, FAQ:
	default:
		return nil, compat.InvalidRequest("outcome", "invalid_value", "Invalid 'outcome': expected answered, unanswered or faq.")
	}
	if q.Page, err = intParam(req.Query, "page"); err != nil {
		return nil, err
	}
	if q.PerPage, err = intParam(req.Query, "per_page"); err != nil {
		return nil, err
	}
	return a.Store.Questions(ctx, q)
}

func (a *API) faqList(ctx context.Context, _ *server.Request) (any, error) {
	es, err := a.Store.FAQEntries(ctx)
	if err != nil {
		return nil, err
	}
	return map[string]any{"object": "list", "data": es}, nil
}

func (a *API) faqAdd(ctx context.Context, req *server.Request) (any, error) {
	var e struct {
		Question string `json:"question"`
		Answer   string `json:"answer"`
		URL      string `json:"url"`
		Title    string `json:"title"`
		Lang     string `json:"lang"`
	}
	if err := compat.DecodeStrict(req.Body, &e); err != nil {
		return nil, err
	}
	e.Question, e.Answer, e.URL, e.Title = strings.TrimSpace(e.Question), strings.TrimSpace(e.Answer), strings.TrimSpace(e.URL), strings.TrimSpace(e.Title)
	e.Lang = strings.TrimSpace(e.Lang)
	for _, f := range []struct{ name, v string }{{"question", e.Question}, {"answer", e.Answer}, {"url", e.URL}} {
		if f.v == "" {
			return nil, compat.InvalidRequest(f.name, "missing_required_parameter", "Missing required parameter: '%s'.", f.name)
		}
	}
	if u, err := url.Parse(e.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, compat.InvalidRequest("url", "invalid_url", "Invalid 'url': expected an absolute http(s) URL of the site's page that answers the question.")
	}
	if e.Lang != "" && textnorm.Base(e.Lang) == "" {
		return nil, compat.InvalidRequest("lang", "invalid_value", "Invalid 'lang': expected a BCP 47 language tag such as \"de\" or \"pt-BR\", or none for the language the entry is written in.")
	}
	entry, err := a.Store.AddFAQ(ctx, FAQEntry{Question: e.Question, Answer: e.Answer, URL: e.URL, Title: e.Title, Lang: e.Lang})
	if err != nil {
		return nil, err
	}
	req.Log("faq_entry", entry.ID, "question", entry.Question)
	if err := a.faqChanged(ctx); err != nil {
		return nil, err
	}
	return struct {
		Object string `json:"object"`
		FAQEntry
	}{"faq.entry", entry}, nil
}

func (a *API) faqDelete(ctx context.Context, req *server.Request) (any, error) {
	id, err := strconv.ParseInt(req.Params["id"], 10, 64)
	notFound := &compat.APIError{Status: http.StatusNotFound, Type: compat.TypeInvalidRequest, Param: "id",
		Code: "faq_entry_not_found", Message: fmt.Sprintf("No FAQ entry with id '%s'.", req.Params["id"])}
	if err != nil {
		return nil, notFound
	}
	if err := a.Store.DeleteFAQ(ctx, id); errors.Is(err, ErrNotFound) {
		return nil, notFound
	} else if err != nil {
		return nil, err
	}
	req.Log("faq_entry", id)
	if err := a.faqChanged(ctx); err != nil {
		return nil, err
	}
	return map[string]any{"object": "faq.entry.deleted", "id": id, "deleted": true}, nil
}

// faqChanged hands the stored entries to FAQChanged.
func (a *API) faqChanged(ctx context.Context) error {
	if a.FAQChanged == nil {
		return nil
	}
	es, err := a.Store.FAQEntries(ctx)
	if err != nil {
		return err
	}
	return a.FAQChanged(ctx, es)
}
