package server

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/retrieval"
)

// Retriever serves POST /v1/retrieve: retrieval for a conversation, without generation.
type Retriever interface {
	Search(ctx context.Context, msgs []retrieval.Message) (retrieval.Analysis, *retrieval.Result, error)
}

// retrieveResponse is the body of POST /v1/retrieve (DESIGN.md, "HTTP API").
type retrieveResponse struct {
	Object   string               `json:"object"`
	Query    string               `json:"query"`
	Analysis string               `json:"analysis"`
	Rewrites []string             `json:"rewrites"`
	Pages    []retrieval.PageHit  `json:"pages"`
	Chunks   []retrieval.ChunkHit `json:"chunks"`
	Context  string               `json:"context"`
	// ContextTokens, Confidence and Empty say how much context there is and how sure retrieval is.
	ContextTokens int               `json:"context_tokens"`
	Confidence    float64           `json:"confidence"`
	Empty         bool              `json:"empty"`
	Timings       map[string]string `json:"timings"`
}

// retrieve accepts {"query": "..."} or {"messages": [...]} (chat messages, validated like a chat request).
func (s *Server) retrieve(c *fiber.Ctx) error {
	var in struct {
		Query    *string         `json:"query"`
		Messages json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(c.Body(), &in); err != nil {
		return compat.InvalidJSON(err)
	}
	var msgs []retrieval.Message
	switch {
	case in.Query != nil:
		if strings.TrimSpace(*in.Query) == "" {
			return compat.InvalidRequest("query", "", "query must not be empty")
		}
		msgs = []retrieval.Message{{Role: "user", Content: *in.Query}}
	case len(in.Messages) > 0:
		req, err := compat.DecodeChatRequest([]byte(`{"messages":` + string(in.Messages) + `}`))
		if err != nil {
			return err
		}
		for _, m := range req.Messages {
			msgs = append(msgs, retrieval.Message{Role: m.Role, Content: m.Text()})
		}
	default:
		return compat.InvalidRequest("query", "", "either query or messages is required")
	}
	a, res, err := s.cfg.Retriever.Search(c.UserContext(), msgs)
	if err != nil {
		return err
	}
	if res == nil {
		return compat.InvalidRequest("messages", "", "the messages contain no user question")
	}
	return c.JSON(retrieveResponse{Object: "retrieval", Query: a.Question, Analysis: a.Source, Rewrites: res.Rewrites,
		Pages: nonNil(res.Pages), Chunks: nonNil(res.Chunks), Context: res.Context, ContextTokens: res.ContextTokens,
		Confidence: res.Confidence, Empty: res.Empty, Timings: res.Timings})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
