package upstream

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/ragproxy/ragproxy/compat"
)

// Outcome classifies one attempt against an upstream.
type Outcome string

// The outcomes of an attempt.
const (
	// OutcomeSuccess: the upstream answered (non-stream: the whole body;
	// stream: the first event).
	OutcomeSuccess Outcome = "success"
	// OutcomeError: any other failure (a 4xx or 5xx other than 429, a
	// dropped or refused connection, an error event before any content).
	OutcomeError Outcome = "error"
	// OutcomeTimeout: no first byte within Config.FirstByteTimeout, or
	// the caller's deadline passed.
	OutcomeTimeout Outcome = "timeout"
	// OutcomeRateLimited: the upstream answered 429.
	OutcomeRateLimited Outcome = "rate_limited"
	// OutcomeCanceled: the caller's context was cancelled during the attempt
	// (the client went away).
	OutcomeCanceled Outcome = "canceled"
)

// Attempt is one request sent to one upstream on behalf of a Call. A Call
// that is retried or failed over makes several.
type Attempt struct {
	// Upstream names the upstream the attempt went to.
	Upstream string
	// Fallback reports that Upstream is Config.Fallback.
	Fallback bool
	// Outcome classifies the attempt.
	Outcome Outcome
	// ErrorType is the attempt's error in OpenTelemetry's error.type form
	// (see ErrorType); "" on success.
	ErrorType string
	// Err is the attempt's error, nil on success.
	Err error
	// Duration runs from the start of the attempt to its outcome: the whole
	// body for Complete, the first event for Stream, or the failure. Backoff
	// pauses between attempts are not included.
	Duration time.Duration
}

// Served reports the attempts behind one Call, successful or not.
type Served struct {
	// Upstream names the upstream that answered; "" when none did.
	Upstream string
	// Attempts lists every attempt in the order it was sent; empty when the
	// call failed before any was (an unencodable request).
	Attempts []Attempt
}

// Failover reports whether the call was sent to the fallback upstream: at
// least one attempt went to it, whether or not it answered. A call the
// primary answered, or that failed with a non-retryable error on the
// primary, is no failover.
func (s Served) Failover() bool {
	for _, a := range s.Attempts {
		if a.Fallback {
			return true
		}
	}
	return false
}

func newAttempt(u *target, err error, d time.Duration) Attempt {
	t := ErrorType(err)
	return Attempt{Upstream: u.Name, Fallback: u.fallback, Outcome: outcomeOf(t), ErrorType: t, Err: err, Duration: d}
}

// ErrorType returns err in the form of OpenTelemetry's error.type attribute
// for an upstream call: "" for nil; "canceled" for a cancelled context;
// "timeout" for a first-byte timeout or a passed deadline; "connection" for
// an upstream that could not be reached or dropped the connection; the HTTP
// status ("429", "500") for any other *compat.APIError; "_OTHER" otherwise.
func ErrorType(err error) string {
	if err == nil {
		return ""
	}
	if errors.Is(err, context.Canceled) {
		return "canceled"
	}
	var ae *compat.APIError
	if errors.As(err, &ae) {
		switch ae.Code {
		case "upstream_timeout":
			return "timeout"
		case "upstream_unreachable":
			return "connection"
		}
		return strconv.Itoa(ae.Status)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	// The error.type fallback of the OpenTelemetry conventions.
	return "_OTHER"
}

// outcomeOf maps an ErrorType to the attempt's Outcome.
func outcomeOf(errorType string) Outcome {
	switch errorType {
	case "":
		return OutcomeSuccess
	case "timeout":
		return OutcomeTimeout
	case "canceled":
		return OutcomeCanceled
	case strconv.Itoa(http.StatusTooManyRequests):
		return OutcomeRateLimited
	}
	return OutcomeError
}
