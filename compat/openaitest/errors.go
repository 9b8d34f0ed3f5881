package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// apiError is one error the stand-in sends by its rules, in OpenAI's shape
// {"error":{"message","type","param","code"}}; param and code are null when
// empty, as OpenAI writes them.
type apiError struct {
	status  int
	message string
	typ     string
	param   string
	code    string
	// retryAfter, when positive, is sent as Retry-After in whole seconds.
	retryAfter time.Duration
}

// errorObject is the "error" member of OpenAI's error body, in its field order.
type errorObject struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func (e *apiError) body() []byte {
	nullable := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	b, _ := json.Marshal(struct {
		Error errorObject `json:"error"`
	}{errorObject{e.message, e.typ, nullable(e.param), nullable(e.code)}})
	return b
}

// refusalCode is the key a refusal is counted under in Stats.Refused: its
// code, else its type (OpenAI leaves the code of some 400s null).
func (e *apiError) refusalCode() string {
	if e.code != "" {
		return e.code
	}
	return e.typ
}

// refuse writes e and counts it.
func (s *Server) refuse(w http.ResponseWriter, e *apiError) {
	s.mu.Lock()
	s.refused[e.refusalCode()]++
	s.mu.Unlock()
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(int64((e.retryAfter+time.Second-1)/time.Second)))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_, _ = w.Write(e.body())
}

// The messages below are OpenAI's as its API returns them (and as its error
// code guide and rate-limit guide quote them); where a message names the
// request's own figures, they are filled in the same way.

// errInvalidKey is the 401 for a wrong or missing key. OpenAI shows the key's
// first and last characters only.
func errInvalidKey(key string) *apiError {
	if key == "" {
		return &apiError{status: http.StatusUnauthorized, typ: "invalid_request_error", code: "invalid_api_key",
			message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys."}
	}
	masked := "****"
	if len(key) > 8 {
		masked = key[:3] + "*****" + key[len(key)-4:]
	}
	return &apiError{status: http.StatusUnauthorized, typ: "invalid_request_error", code: "invalid_api_key",
		message: "Incorrect API key provided: " + masked + ". You can find your API key at https://platform.openai.com/account/api-keys."}
}

// errQuota is the 429 of a key whose credit is spent: OpenAI's
// insufficient_quota, which no wait clears (error codes guide, "429 - You
// exceeded your current quota").
func errQuota() *apiError {
	return &apiError{status: http.StatusTooManyRequests, typ: "insufficient_quota", code: "insufficient_quota",
		message: "You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors."}
}

// errRateLimit is the 429 of a request over a per-minute limit; kind is
// "requests" or "tokens", which is also the error's type.
func errRateLimit(model, kind string, limit, used, requested int, wait time.Duration) *apiError {
	unit := "requests per min (RPM)"
	if kind == "tokens" {
		unit = "tokens per min (TPM)"
	}
	return &apiError{status: http.StatusTooManyRequests, typ: kind, code: "rate_limit_exceeded",
		message: fmt.Sprintf("Rate limit reached for %s in organization %s on %s: Limit %d, Used %d, Requested %d. Please try again in %s. Visit https://platform.openai.com/account/rate-limits to learn more.",
			model, organization, unit, limit, used, requested, formatReset(wait))}
}

// errTooLarge is the 429 of a request that asks for more tokens than the
// key's whole per-minute limit: waiting does not help, the request must
// shrink.
func errTooLarge(model string, limit, requested int) *apiError {
	return &apiError{status: http.StatusTooManyRequests, typ: "tokens", code: "rate_limit_exceeded",
		message: fmt.Sprintf("Request too large for %s in organization %s on tokens per min (TPM): Limit %d, Requested %d. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.",
			model, organization, limit, requested)}
}

// organization is the organization id the rate-limit messages name.
const organization = "org-fake"

// invalid is a 400 invalid_request_error.
func invalid(message, param, code string) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request_error", message: message, param: param, code: code}
}

// formatReset writes a duration as OpenAI's x-ratelimit-reset-* headers and
// "try again in" messages do ("1s", "6m0s", "20ms", "1.5s"): Go's duration
// form, rounded up to the millisecond so that a wait is never shown shorter
// than it is.
func formatReset(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	d = (d + time.Millisecond - 1).Truncate(time.Millisecond)
	return d.String()
}
