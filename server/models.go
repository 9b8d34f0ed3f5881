package server

import (
	"context"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/sync/singleflight"

	"github.com/ragproxy/ragproxy/compat"
)

// modelsTimeout bounds the upstream model listing.
const modelsTimeout = 5 * time.Second

// upstreamModelsTTL is how long a listing of the upstream's models is served before it is asked again.
const upstreamModelsTTL = time.Minute

// upstreamModels caches the upstream's model list: clients poll /v1/models (Open WebUI on every page load), and
// the upstream's list changes rarely. Concurrent misses share one upstream call; a failed call keeps serving the
// last good list.
type upstreamModels struct {
	group singleflight.Group
	mu    sync.Mutex
	list  []compat.Model
	at    time.Time
}

func (u *upstreamModels) get(ctx context.Context, s *Server) []compat.Model {
	u.mu.Lock()
	list, fresh := u.list, !u.at.IsZero() && time.Since(u.at) < upstreamModelsTTL
	u.mu.Unlock()
	if fresh {
		return list
	}
	v, _, _ := u.group.Do("models", func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), modelsTimeout)
		defer cancel()
		ups, err := s.up.Models(ctx)
		u.mu.Lock()
		defer u.mu.Unlock()
		if err != nil {
			s.log.Warn("list upstream models", "err", err)
			return u.list, nil
		}
		u.list, u.at = ups, time.Now()
		return ups, nil
	})
	return v.([]compat.Model)
}

// models returns the aliases followed, when configured, by the upstream's
// models. An upstream that cannot list its models only loses its entries.
func (s *Server) models(ctx context.Context) []compat.Model {
	out := make([]compat.Model, 0, len(s.cfg.Models))
	seen := map[string]bool{}
	for _, m := range s.cfg.Models {
		a := s.aliases[m.ID]
		out = append(out, compat.NewModel(a.ID, a.OwnedBy, 0))
		seen[a.ID] = true
	}
	if s.cfg.ListUpstreamModels {
		for _, m := range s.upModels.get(ctx, s) {
			if !seen[m.ID] {
				out = append(out, m)
				seen[m.ID] = true
			}
		}
	}
	return out
}

func (s *Server) listModels(c *fiber.Ctx) error {
	return c.JSON(compat.ModelList{Object: "list", Data: s.models(c.UserContext())})
}

func (s *Server) getModel(c *fiber.Ctx) error {
	id := c.Params("+")
	for _, m := range s.models(c.UserContext()) {
		if m.ID == id {
			return c.JSON(m)
		}
	}
	return compat.ModelNotFound(id)
}

func (s *Server) healthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok"})
}

func (s *Server) readyz(c *fiber.Ctx) error {
	if s.draining.Load() {
		return compat.Unavailable("The server is shutting down.")
	}
	out := fiber.Map{"status": "ready"}
	if s.cfg.Ready != nil {
		rep := s.cfg.Ready.Check(c.UserContext())
		if !rep.Ready {
			return compat.Unavailable("Not ready: " + rep.down())
		}
		if len(rep.Backends) > 0 {
			out["backends"] = rep.Backends
		}
	}
	if v := s.indexVersion(); v != "" {
		out["index_version"] = v
	}
	return c.JSON(out)
}
