package compat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The HTTP statuses of the errors below (RFC 9110, section 15; 429 is RFC 6585's), written out: the wire format
// is data, and this package leaves HTTP itself to those that speak it.
const (
	statusBadRequest      = 400
	statusUnauthorized    = 401
	statusNotFound        = 404
	statusTooLarge        = 413
	statusTooManyRequests = 429
	statusServerError     = 500
	statusBadGateway      = 502
	statusUnavailable     = 503
	statusGatewayTimeout  = 504
)

// Error types used in OpenAI's error body. See
// https://platform.openai.com/docs/guides/error-codes.
const (
	TypeInvalidRequest = "invalid_request_error"
	TypeServer         = "server_error"
	TypeRateLimit      = "requests"
)

// APIError is an error that becomes an OpenAI error response: an HTTP status
// and the body {"error":{"message","type","param","code"}}. Param and Code are
// written as null when empty, as OpenAI does.
//
// An APIError built from an upstream response keeps that response's body in
// Body and relays it unchanged.
type APIError struct {
	// Status is the HTTP status sent to the client.
	Status int
	// Message, Type, Param and Code fill the error object.
	Message string
	Type    string
	Param   string
	Code    string
	// RetryAfter is the Retry-After header value (seconds) sent with 429 and
	// 503; empty means "1" for those statuses.
	RetryAfter string
	// Body, when set, is the upstream's own error body, relayed verbatim.
	Body []byte
	// Upstream names the upstream that produced the error, if any.
	Upstream string
	// Err is the underlying cause, if any; it is never shown to clients.
	Err error
}

// Error implements error.
func (e *APIError) Error() string {
	kind := e.Type
	if e.Code != "" && e.Code != e.Type {
		// The code tells apart what the type does not: a rate limit ("rate_limit_exceeded") from a spent quota.
		kind += " " + e.Code
	}
	if e.Err != nil {
		return fmt.Sprintf("openai error %d %s: %s: %v", e.Status, kind, e.Message, e.Err)
	}
	return fmt.Sprintf("openai error %d %s: %s", e.Status, kind, e.Message)
}

// Unwrap returns the cause.
func (e *APIError) Unwrap() error { return e.Err }

// errorObject is the wire form of OpenAI's error object. Pointers render as
// null when empty.
type errorObject struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Object returns the error object {"message","type","param","code"} as JSON.
// For an upstream error with a body it is the body's "error" member.
func (e *APIError) Object() json.RawMessage {
	if len(e.Body) > 0 {
		var wrapper struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(e.Body, &wrapper) == nil && len(wrapper.Error) > 0 && wrapper.Error[0] == '{' {
			return wrapper.Error
		}
	}
	b, _ := Marshal(errorObject{Message: e.Message, Type: e.Type, Param: optional(e.Param), Code: optional(e.Code)}) // strings only
	return b
}

// JSON returns the full error body {"error":{...}}.
func (e *APIError) JSON() []byte {
	if len(e.Body) > 0 && json.Valid(e.Body) {
		var wrapper struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(e.Body, &wrapper) == nil && len(wrapper.Error) > 0 && wrapper.Error[0] == '{' {
			return e.Body
		}
	}
	obj := e.Object()
	out := make([]byte, 0, len(obj)+10)
	out = append(out, `{"error":`...)
	out = append(out, obj...)
	return append(out, '}')
}

// RetryAfterValue returns the Retry-After header value for the error's status,
// or "" when none is sent.
func (e *APIError) RetryAfterValue() string {
	if e.Status != statusTooManyRequests && e.Status != statusUnavailable {
		return ""
	}
	if e.RetryAfter != "" {
		return e.RetryAfter
	}
	return "1"
}

// InvalidRequest returns a 400 invalid_request_error about param.
func InvalidRequest(param, code, format string, args ...any) *APIError {
	return &APIError{Status: statusBadRequest, Type: TypeInvalidRequest, Param: param, Code: code,
		Message: fmt.Sprintf(format, args...)}
}

// ErrInvalidJSON is the message OpenAI sends for a body that is not JSON.
const msgInvalidJSON = "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)"

// InvalidJSON returns the 400 error for a body that is not a JSON object.
func InvalidJSON(cause error) *APIError {
	return &APIError{Status: statusBadRequest, Type: TypeInvalidRequest, Message: msgInvalidJSON, Err: cause}
}

// DecodeStrict decodes a JSON body into v, refusing unknown fields, so that a misspelt one is not silently
// ignored: an unknown field is named in OpenAI's unknown_parameter error (as DecodeChatRequest names it), any
// other fault is InvalidJSON.
func DecodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		// encoding/json names the field only in its message: `json: unknown field "markdwon"`.
		if _, f, ok := strings.Cut(err.Error(), "unknown field "); ok {
			field := strings.Trim(f, `"`)
			return InvalidRequest(field, "unknown_parameter", "Unrecognized request argument supplied: %s", field)
		}
		return InvalidJSON(err)
	}
	return nil
}

// InvalidAPIKey returns the 401 error for a missing or wrong client key.
// masked is the key as shown to the client ("" when none was sent).
func InvalidAPIKey(masked string) *APIError {
	msg := "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
	if masked != "" {
		msg = "Incorrect API key provided: " + masked + "."
	}
	return &APIError{Status: statusUnauthorized, Type: TypeInvalidRequest, Code: "invalid_api_key", Message: msg}
}

// ModelNotFound returns the 404 error for an unknown model id.
func ModelNotFound(id string) *APIError {
	return &APIError{Status: statusNotFound, Type: TypeInvalidRequest, Param: "model", Code: "model_not_found",
		Message: "The model `" + id + "` does not exist or you do not have access to it."}
}

// TooLarge returns the 413 error for a request body over limit bytes.
func TooLarge(limit int) *APIError {
	return &APIError{Status: statusTooLarge, Type: TypeInvalidRequest, Code: "request_too_large",
		Message: "Request body too large: the limit is " + strconv.Itoa(limit) + " bytes."}
}

// ServerError returns a 500 server_error that hides cause from the client.
func ServerError(cause error) *APIError {
	return &APIError{Status: statusServerError, Type: TypeServer, Err: cause,
		Message: "The server had an error while processing your request. Sorry about that!"}
}

// Unavailable returns a 503 server_error, sent while the server drains.
func Unavailable(msg string) *APIError {
	return &APIError{Status: statusUnavailable, Type: TypeServer, Code: "unavailable", Message: msg, RetryAfter: "5"}
}

// UpstreamUnreachable returns the 502 error for an upstream that could not be
// reached or dropped the connection before answering.
func UpstreamUnreachable(upstream string, cause error) *APIError {
	return &APIError{Status: statusBadGateway, Type: TypeServer, Code: "upstream_unreachable", Upstream: upstream, Err: cause,
		Message: "The upstream model server could not be reached."}
}

// UpstreamTimeout returns the 504 error for an upstream that did not answer
// in time.
func UpstreamTimeout(upstream string, cause error) *APIError {
	return &APIError{Status: statusGatewayTimeout, Type: TypeServer, Code: "upstream_timeout", Upstream: upstream, Err: cause,
		Message: "The upstream model server did not answer in time."}
}

// AsAPIError returns err as an *APIError, or a 500 ServerError wrapping it.
func AsAPIError(err error) *APIError {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae
	}
	return ServerError(err)
}
