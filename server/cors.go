package server

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/cors"
)

// Browser clients (Open WebUI's Direct Connections, a page of the operator's own) call the API from another
// origin: the browser sends a preflight OPTIONS first and reads an answer only when it names the page's origin.
// The preflight is answered before client auth, since browsers send it without the Authorization header.

// corsExposed are the response headers a browser client may read.
var corsExposed = []string{headerRequestID, headerProcessing, headerXCache, fiber.HeaderRetryAfter}

// CheckOrigin reports whether o is a valid entry of Config.CORSOrigins: "*", or a scheme and host with an
// optional port and nothing else (https://chat.example.org, http://localhost:3000).
func CheckOrigin(o string) error {
	if o == "*" {
		return nil
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" ||
		u.Fragment != "" || u.User != nil {
		return fmt.Errorf("cors origin %q: want scheme://host[:port], e.g. https://chat.example.org, or *", o)
	}
	return nil
}

// corsMiddleware answers preflights and adds the CORS headers for the configured origins, the embed origins
// among them; nil when there are none.
func (s *Server) corsMiddleware() fiber.Handler {
	var origins []string
	for _, o := range s.cfg.CORSOrigins {
		if o = strings.TrimSpace(o); o != "" && CheckOrigin(o) == nil {
			origins = append(origins, strings.TrimSuffix(o, "/"))
		}
	}
	origins = append(origins, EmbedOrigins(s.cfg.Embed.Origins)...)
	if len(origins) == 0 {
		return nil
	}
	return cors.New(cors.Config{
		AllowOrigins: strings.Join(origins, ","),
		AllowMethods: strings.Join([]string{fiber.MethodGet, fiber.MethodPost, fiber.MethodOptions}, ","),
		// Empty: the headers the preflight asks for are allowed (Authorization, Content-Type, Accept, a client's
		// own), since a key, not the origin, guards the API.
		AllowHeaders:  "",
		ExposeHeaders: strings.Join(corsExposed, ","),
		MaxAge:        600,
	})
}
