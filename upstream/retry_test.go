package upstream

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ragproxy/ragproxy/compat"
)

func TestRetryAfter(t *testing.T) {
	future := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name string
		err  error
		min  time.Duration
		max  time.Duration
		ok   bool
	}{
		{"seconds", &compat.APIError{Status: 429, RetryAfter: "3"}, 3 * time.Second, 3 * time.Second, true},
		{"http date", &compat.APIError{Status: 503, RetryAfter: future}, 80 * time.Second, 90 * time.Second, true},
		{"past date", &compat.APIError{Status: 429, RetryAfter: "Mon, 02 Jan 2006 15:04:05 GMT"}, 0, 0, true},
		{"wrapped", fmtWrap(&compat.APIError{Status: 429, RetryAfter: "1"}), time.Second, time.Second, true},
		{"not a rate limit", &compat.APIError{Status: 500, RetryAfter: "3"}, 0, 0, false},
		{"no header", &compat.APIError{Status: 429}, 0, 0, false},
		{"junk", &compat.APIError{Status: 429, RetryAfter: "soon"}, 0, 0, false},
		{"not an API error", errors.New("boom"), 0, 0, false},
	}
	for _, tt := range tests {
		d, ok := retryAfter(tt.err)
		if ok != tt.ok || d < tt.min || d > tt.max {
			t.Errorf("%s: retryAfter = %v, %v; want %v..%v, %v", tt.name, d, ok, tt.min, tt.max, tt.ok)
		}
	}
}

func fmtWrap(err error) error { return errors.Join(errors.New("attempt"), err) }
