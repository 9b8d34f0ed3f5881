package server

import (
	"net/http"
	"strings"

	"github.com/ragproxy/ragproxy/compat"
)

// Task kinds a client sends besides the user's questions.
const (
	TaskTitle        = "title"
	TaskTags         = "tags"
	TaskFollowUps    = "follow_ups"
	TaskQueries      = "queries"
	TaskAutocomplete = "autocomplete"
	TaskOther        = "task"
	TaskBypass       = "bypass"
)

// TaskKind recognises requests that must bypass retrieval: Open WebUI's background tasks (the X-OpenWebUI-Task
// header, or a last user message starting with "### Task:", Open WebUI's task prompt template), LibreChat's title
// request, and X-Ragproxy-Retrieval: off. It returns "" for ordinary questions.
func TaskKind(h http.Header, msgs []compat.Message) string {
	if strings.EqualFold(h.Get("X-Ragproxy-Retrieval"), "off") {
		return TaskBypass
	}
	if t := strings.ToLower(h.Get("X-OpenWebUI-Task")); t != "" {
		switch {
		case strings.Contains(t, "title"):
			return TaskTitle
		case strings.Contains(t, "tag"):
			return TaskTags
		case strings.Contains(t, "follow"):
			return TaskFollowUps
		case strings.Contains(t, "quer"):
			return TaskQueries
		case strings.Contains(t, "autocomplete"):
			return TaskAutocomplete
		}
		return TaskOther
	}
	last := ""
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			last = strings.TrimSpace(msgs[i].Text())
			break
		}
	}
	switch {
	case strings.HasPrefix(last, "### Task:"):
		l := strings.ToLower(last)
		switch {
		case strings.Contains(l, "title"):
			return TaskTitle
		case strings.Contains(l, "tags"):
			return TaskTags
		case strings.Contains(l, "follow-up"):
			return TaskFollowUps
		case strings.Contains(l, "queries"):
			return TaskQueries
		}
		return TaskOther
	case strings.Contains(last, "Please generate a concise, 5-word-or-less title for the conversation"):
		// LibreChat's title prompt (api/app/clients/prompts/titlePrompts.js).
		return TaskTitle
	}
	return ""
}
