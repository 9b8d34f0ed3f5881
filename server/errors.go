package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/ragproxy/ragproxy/compat"
)

// toAPIError maps any handler error to the OpenAI error the client gets.
// This is the one place errors become statuses and bodies.
func (s *Server) toAPIError(c *fiber.Ctx, err error) *compat.APIError {
	var ae *compat.APIError
	if errors.As(err, &ae) {
		return ae
	}
	var fe *fiber.Error
	if errors.As(err, &fe) {
		switch fe.Code {
		case fiber.StatusRequestEntityTooLarge:
			return compat.TooLarge(s.cfg.MaxBodyBytes)
		case fiber.StatusNotFound:
			return &compat.APIError{Status: http.StatusNotFound, Type: compat.TypeInvalidRequest,
				Message: fmt.Sprintf("Unknown request URL: %s %s.", c.Method(), c.Path())}
		case fiber.StatusMethodNotAllowed:
			return &compat.APIError{Status: http.StatusMethodNotAllowed, Type: compat.TypeInvalidRequest,
				Message: fmt.Sprintf("Method %s not allowed for %s.", c.Method(), c.Path())}
		}
		if fe.Code >= 400 && fe.Code < 500 {
			return &compat.APIError{Status: fe.Code, Type: compat.TypeInvalidRequest, Message: fe.Message}
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return compat.UpstreamTimeout("", err)
	}
	return compat.ServerError(err)
}

// handleError writes err as OpenAI's error body. It is also fiber's
// ErrorHandler, which sees errors raised before any route ran (413 body too
// large), so it fills in the request id when the middleware did not.
func (s *Server) handleError(c *fiber.Ctx, err error) error {
	ae := s.toAPIError(c, err)
	if ae.Status >= 500 {
		s.log.Error("request failed", "request_id", requestID(c), "status", ae.Status, "err", err)
	}
	if len(c.Response().Header.Peek(headerRequestID)) == 0 {
		c.Set(headerRequestID, newRequestID())
		c.Set(headerProcessing, "0")
	}
	if ra := ae.RetryAfterValue(); ra != "" {
		c.Set(fiber.HeaderRetryAfter, ra)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	return c.Status(ae.Status).Send(ae.JSON())
}
