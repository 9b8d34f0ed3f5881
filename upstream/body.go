package upstream

import (
	"net/http"

	"github.com/openai/openai-go/v3/option"
)

// InMemoryBody is an SDK middleware that hands net/http each request's body as the in-memory reader it is, so
// that the request's headers and body go out in one write. The openai-go SDK wraps every attempt's body in a
// reader of its own, which net/http cannot tell is in memory: it then flushes the headers before copying the
// body, two write calls per request where one does. A request the SDK can replay (GetBody set: it sent bytes)
// is given a fresh copy of those bytes instead; any other is left as it is.
func InMemoryBody(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	if req.GetBody != nil && req.Body != nil && req.Body != http.NoBody {
		if body, err := req.GetBody(); err == nil {
			_ = req.Body.Close()
			req.Body = body
		}
	}
	return next(req)
}
