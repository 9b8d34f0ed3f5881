package server

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/ratelimit"
)

// The chat widget (package webui's /widget.js) runs on the pages of the organisation's other sites: it frames the
// chat page, whose requests to /v1 are then same-origin, and a site's own scripts may call the API from the
// browser too. A widget cannot hold a secret, so it authenticates with a publishable key: one that opens only
// chat, only from the listed sites (or from the chat page they frame), and only at a visitor's pace.

// Embed lets the chat widget run on other sites' pages. The zero value turns it off.
type Embed struct {
	// Origins are the sites whose pages may carry the widget (scheme://host[:port], each checked by
	// CheckEmbedOrigin): they may frame the chat page, call the API from the browser (CORS) and use Keys.
	// Default none: the widget is off.
	Origins []string
	// Keys are publishable keys for the widget: sent from a browser, they are public. Such a key is accepted
	// only on POST /v1/chat/completions, only from a page of Origins or from the server's own chat page (which
	// only Origins may frame), and each visitor (client address) using one is held to RequestsPerMinute.
	// Default none.
	Keys []string
	// RequestsPerMinute bounds the chat requests of one visitor with a publishable key. Default
	// DefaultWidgetRequestsPerMinute.
	RequestsPerMinute int
}

// DefaultWidgetRequestsPerMinute is Embed.RequestsPerMinute's default: a person asks a question every few
// seconds at most, a script that took the key far more often.
const DefaultWidgetRequestsPerMinute = 10

// localWidget holds the rate-limit key of a request authenticated with a publishable key.
const localWidget = "ragproxy.widget"

// CheckEmbedOrigin reports whether o is a valid entry of Embed.Origins: a scheme and host with an optional port
// (and an optional trailing slash) and nothing else. Unlike CORSOrigins, "*" is refused: frame-ancestors * would
// let any site frame the chat page.
func CheckEmbedOrigin(o string) error {
	if o == "*" {
		return fmt.Errorf("embed origin %q: list the sites, e.g. https://www.example.org", o)
	}
	if err := CheckOrigin(strings.TrimSuffix(o, "/")); err != nil {
		return fmt.Errorf("embed origin %q: want scheme://host[:port], e.g. https://www.example.org", o)
	}
	return nil
}

// EmbedOrigins returns the valid entries of origins, trimmed, without a trailing slash and in order; invalid
// ones are dropped. The chat page's frame-ancestors, CORS and the publishable keys all read this one list.
func EmbedOrigins(origins []string) []string {
	var out []string
	for _, o := range origins {
		if o = strings.TrimSuffix(strings.TrimSpace(o), "/"); o != "" && CheckEmbedOrigin(o) == nil {
			out = append(out, o)
		}
	}
	return out
}

// errWidgetScope answers a publishable key used for anything but chat.
var errWidgetScope = &compat.APIError{Status: fiber.StatusForbidden, Type: compat.TypeInvalidRequest, Code: "publishable_key_scope",
	Message: "This is a publishable (widget) key: it may only call POST /v1/chat/completions."}

// errWidgetOrigin answers a publishable key sent from a page that is not allowed to embed the widget.
var errWidgetOrigin = &compat.APIError{Status: fiber.StatusForbidden, Type: compat.TypeInvalidRequest, Code: "publishable_key_origin",
	Message: "This publishable (widget) key is only accepted from the sites the server lists in its embed origins."}

// widgetAuth admits a request that carries a publishable key: chat only, from an allowed page, within the
// visitor's rate.
func (s *Server) widgetAuth(c *fiber.Ctx) error {
	if c.Method() != fiber.MethodPost || strings.TrimSuffix(c.Path(), "/") != "/v1/chat/completions" {
		return errWidgetScope
	}
	if !s.widgetOrigin(c) {
		return errWidgetOrigin
	}
	visitor := "widget:" + c.IP()
	rpm := s.cfg.Embed.RequestsPerMinute
	if rpm <= 0 {
		rpm = DefaultWidgetRequestsPerMinute
	}
	res, err := s.limits.Take(context.Background(), "requests:"+visitor, 1, ratelimit.PerMinute(rpm), false)
	if err != nil {
		s.limitErrors.note(s.log, "rate-limit store failing; requests go through unlimited", err)
	} else if !res.Allowed {
		return &compat.APIError{Status: fiber.StatusTooManyRequests, Type: compat.TypeRateLimit, Code: "rate_limit_exceeded",
			RetryAfter: strconv.Itoa(int(math.Ceil(res.RetryAfter.Seconds()))),
			Message:    fmt.Sprintf("Rate limit reached for this visitor: %d questions per minute. Please try again shortly.", rpm)}
	}
	// Config.RateLimits count this visitor too, not every visitor of the widget as one client of the key.
	c.Locals(localWidget, visitor)
	return c.Next()
}

// widgetOrigin reports whether the request comes from a page that may use a publishable key: one of the embed
// origins, or the server's own (the chat page framed by one; a browser sends Origin with every POST). A request
// without Origin is not a browser's and gets no publishable access.
func (s *Server) widgetOrigin(c *fiber.Ctx) bool {
	origin := c.Get(fiber.HeaderOrigin)
	if origin == "" {
		return false
	}
	for _, o := range EmbedOrigins(s.cfg.Embed.Origins) {
		if strings.EqualFold(o, origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, string(c.Request().Host())) &&
		c.Get("Sec-Fetch-Site") != "cross-site"
}
