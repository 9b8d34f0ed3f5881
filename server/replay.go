package server

import (
	"context"
	"net/http"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/ragproxy/ragproxy/compat"
)

// replay answers the request from a record of the response cache, as a stream or as JSON, with x-cache: HIT.
func (s *Server) replay(c *fiber.Ctx, st *chatState, a *cachedAnswer) (outcome, streamBody) {
	b := compat.ChunkBuilder{ID: "chatcmpl-" + st.id[len("req_"):], Model: a.Model, Created: time.Now().Unix()}
	if b.Model == "" {
		b.Model = s.responseModel(st.req.Model)
	}
	c.Set(headerXCache, "HIT")
	out := outcome{status: http.StatusOK, id: b.ID, cited: a.Annotations, question: a.Question}
	if st.req.Stream {
		g := &Grounding{Events: a.Events}
		src := &answerSource{i: -1}
		src.chunks = append(src.chunks, b.Role())
		if a.Content != "" || len(a.Annotations) > 0 {
			src.chunks = append(src.chunks, b.Content(a.Content, a.Annotations...))
		}
		src.chunks = append(src.chunks, b.Finish(a.FinishReason))
		if a.Usage != nil {
			src.chunks = append(src.chunks, b.Usage(*a.Usage))
		}
		return out, func(ctx context.Context, sw *sseWriter) outcome { return s.relay(ctx, sw, st, src, g, out) }
	}
	var u compat.Usage
	if a.Usage != nil {
		u = *a.Usage
	}
	out.usage, out.content = a.Usage, a.Content
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	body := withOpenWebUISources(b.Completion(a.Content, u, a.Annotations), st.header, a.Events)
	_ = c.Status(http.StatusOK).Send(body) // Send only sets the body
	return out, nil
}
