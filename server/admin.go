package server

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/ragproxy/ragproxy/compat"
)

// Versioner is a Grounder that answers from a versioned index that may change while serving. The response cache
// keys answers by the version, and /readyz names it.
type Versioner interface {
	IndexVersion() string
}

// adminKey carries the admin key that authenticated a request, masked, for the log.
type adminKey struct{}

// adminRoutes serves Config.Admin under /admin. Admin routes take only admin keys: a client key is refused like
// any wrong key, and without admin keys every admin route answers 403.
func (s *Server) adminRoutes() {
	admin := s.app.Group("/admin", s.adminAuth, s.jsonBody)
	for _, rt := range s.cfg.Admin {
		admin.Add(rt.Method, rt.Path, s.adminRoute(rt))
	}
	admin.Use(func(c *fiber.Ctx) error {
		return &compat.APIError{Status: fiber.StatusNotFound, Type: compat.TypeInvalidRequest, Code: "unknown_url",
			Message: "Unknown admin request: " + c.Method() + " " + c.Path() + "."}
	})
}

// errAdminDisabled answers admin requests when no admin key is configured.
var errAdminDisabled = &compat.APIError{Status: http.StatusForbidden, Type: compat.TypeInvalidRequest, Code: "admin_disabled",
	Message: "The admin API is disabled: start the server with admin keys (RAGPROXY_ADMIN_KEYS) to use it."}

// adminAuth checks the bearer token against the admin keys, in constant time over all of them.
func (s *Server) adminAuth(c *fiber.Ctx) error {
	if len(s.cfg.AdminKeys) == 0 {
		return errAdminDisabled
	}
	token, ok := bearer(c)
	if !ok {
		return compat.InvalidAPIKey("")
	}
	if !anyKey(s.cfg.AdminKeys, token) {
		s.log.Warn("admin request refused", "request_id", requestID(c), "method", c.Method(), "path", c.Path(),
			"key", maskKey(token), "remote", c.IP())
		return compat.InvalidAPIKey(maskKey(token))
	}
	c.Locals(adminKey{}, maskKey(token))
	return c.Next()
}

// adminRoute serves one admin route like a Router's, and logs who did what and how it ended.
func (s *Server) adminRoute(rt Route) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		who, _ := c.Locals(adminKey{}).(string)
		attrs := []any{"request_id", requestID(c), "admin_key", who, "method", c.Method(), "path", c.Path(), "remote", c.IP()}
		req, err := routeRequest(c)
		var out any
		if err == nil {
			req.Key = who
			out, err = rt.Handle(ctx, req)
			attrs = append(attrs, req.logAttrs...)
		}
		if err != nil {
			var ae *compat.APIError
			status := http.StatusInternalServerError
			if errors.As(err, &ae) {
				status = ae.Status
			}
			s.log.Warn("admin action failed", append(attrs, "status", status, "err", err)...)
			return err
		}
		s.log.Info("admin action", attrs...)
		return writeRouteResult(c, rt, out)
	}
}

// indexVersion is the index version answers come from now: the Grounder's when it is a Versioner, else
// Config.IndexVersion.
func (s *Server) indexVersion() string {
	if v, ok := s.cfg.Grounder.(Versioner); ok {
		return v.IndexVersion()
	}
	return s.cfg.IndexVersion
}
