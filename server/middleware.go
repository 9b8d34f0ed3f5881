package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ragproxy/ragproxy/compat"
)

const (
	headerRequestID  = "X-Request-Id"
	headerProcessing = "Openai-Processing-Ms"
	localStart       = "ragproxy.start"
	localRequestID   = "ragproxy.request_id"
	localChat        = "ragproxy.chat"
)

// chatLocals is what the chat handler leaves for the request's
// RequestObserver call.
type chatLocals struct {
	stream bool
	task   string
	// observed is set once EventStart went out.
	observed bool
}

// newRequestID returns "req_" and 16 random bytes in hex.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return "req_" + hex.EncodeToString(b[:])
}

// requestMeta gives every response an x-request-id and, once the handler
// returned (for a stream: when its headers go out), openai-processing-ms.
func (s *Server) requestMeta(c *fiber.Ctx) error {
	start := time.Now()
	id := newRequestID()
	c.Locals(localStart, start)
	c.Locals(localRequestID, id)
	c.Set(headerRequestID, id)
	// The request's context carries its id: every handler runs its work under c.UserContext().
	c.SetUserContext(context.WithValue(c.UserContext(), requestIDKey{}, id))
	err := c.Next()
	if err != nil {
		err = s.handleError(c, err)
	}
	elapsed := time.Since(start)
	c.Set(headerProcessing, strconv.FormatInt(elapsed.Milliseconds(), 10))
	if s.reqObs != nil {
		info := RequestInfo{RequestID: id, Method: c.Method(), Route: c.Route().Path,
			Status: c.Response().StatusCode(), Elapsed: elapsed}
		if cl, ok := c.Locals(localChat).(*chatLocals); ok {
			info.Stream, info.Task, info.Chat = cl.stream, cl.task, cl.observed
		}
		s.reqObs.ObserveRequest(c.UserContext(), info)
	}
	return err
}

func requestID(c *fiber.Ctx) string {
	id, _ := c.Locals(localRequestID).(string)
	return id
}

func requestStart(c *fiber.Ctx) time.Time {
	t, ok := c.Locals(localStart).(time.Time)
	if !ok {
		return time.Now()
	}
	return t
}

// auth checks the bearer token against the configured client keys; a publishable key takes widgetAuth's rules.
func (s *Server) auth(c *fiber.Ctx) error {
	if token, ok := bearer(c); ok && len(s.cfg.Embed.Keys) > 0 && anyKey(s.cfg.Embed.Keys, token) {
		return s.widgetAuth(c)
	}
	if len(s.cfg.APIKeys) == 0 {
		return c.Next()
	}
	token, ok := bearer(c)
	if !ok {
		return compat.InvalidAPIKey("")
	}
	if !anyKey(s.cfg.APIKeys, token) {
		return compat.InvalidAPIKey(maskKey(token))
	}
	return c.Next()
}

// bearer returns the request's bearer token; ok is false when there is none.
func bearer(c *fiber.Ctx) (token string, ok bool) {
	return bearerHeader(c.Get(fiber.HeaderAuthorization))
}

// bearerHeader returns the bearer token of an Authorization header's value.
func bearerHeader(v string) (token string, ok bool) {
	token, ok = strings.CutPrefix(v, "Bearer ")
	return token, ok && token != ""
}

// anyKey reports whether token is one of keys, comparing it with every key in constant time, so neither a
// match's position nor a partial match shows in the time taken.
func anyKey(keys []string, token string) bool {
	match := 0
	for _, k := range keys {
		match |= subtle.ConstantTimeCompare([]byte(token), []byte(k))
	}
	return match == 1
}

// maskKey shows enough of a key to tell keys apart in errors and logs, never enough to guess it: at most its
// last four characters, and no more than a third of it, so a short key shows less and one of up to five
// characters shows nothing.
func maskKey(k string) string {
	n := min(4, len(k)/3)
	if n < 2 {
		return "****"
	}
	return "****" + k[len(k)-n:]
}

// jsonBody refuses a POST, PUT or PATCH body that is not declared JSON. Browsers send text/plain, form and multipart bodies
// across origins without a preflight, so accepting them would let any web page post to the API in a visitor's
// name; a declared JSON body makes the browser ask first (see cors.go).
func (s *Server) jsonBody(c *fiber.Ctx) error {
	if c.Method() != fiber.MethodPost && c.Method() != fiber.MethodPut && c.Method() != fiber.MethodPatch {
		return c.Next()
	}
	ct := strings.ToLower(strings.TrimSpace(c.Get(fiber.HeaderContentType)))
	if mt, _, _ := strings.Cut(ct, ";"); ct == "" || strings.TrimSpace(mt) == fiber.MIMEApplicationJSON || strings.HasSuffix(strings.TrimSpace(mt), "+json") {
		return c.Next()
	}
	return &compat.APIError{Status: fiber.StatusUnsupportedMediaType, Type: compat.TypeInvalidRequest,
		Message: fmt.Sprintf("Unsupported Content-Type %q: send the body as application/json.", c.Get(fiber.HeaderContentType))}
}
