package server

import (
	"net/http"
	"testing"

	"github.com/ragproxy/ragproxy/compat"
)

func TestTaskKind(t *testing.T) {
	title := "### Task:\nGenerate a concise, 3-5 word title with an emoji summarizing the chat history."
	tests := []struct {
		name   string
		header map[string]string
		msgs   []compat.Message
		want   string
	}{
		{"question", nil, []compat.Message{compat.TextMessage("user", "when does term start?")}, ""},
		{"task header wins over the prompt", map[string]string{"X-OpenWebUI-Task": "tags_generation"},
			[]compat.Message{compat.TextMessage("user", title)}, TaskTags},
		{"header names are case-insensitive", map[string]string{"X-OpenWebUI-Task": " Title_Generation "},
			[]compat.Message{compat.TextMessage("user", "x")}, TaskTitle},
		{"an unexpanded template is no task", map[string]string{"X-OpenWebUI-Task": "{{TASK}}"},
			[]compat.Message{compat.TextMessage("user", "when does term start?")}, ""},
		{"an unexpanded template falls back to the prompt", map[string]string{"X-OpenWebUI-Task": "{{TASK}}"},
			[]compat.Message{compat.TextMessage("user", title)}, TaskTitle},
		{"a task heading of an unknown kind", nil, []compat.Message{compat.TextMessage("user", "### Task:\nRate the chat.")}, TaskOther},
		{"a system message can make the task", nil, []compat.Message{compat.TextMessage("system", "Available Tools: []"),
			compat.TextMessage("user", "Query: fees?")}, TaskTools},
		{"an assistant quoting a prompt does not", nil, []compat.Message{compat.TextMessage("assistant", title),
			compat.TextMessage("user", "thanks, and the fees?")}, ""},
		{"retrieval off", map[string]string{"X-Ragproxy-Retrieval": "OFF"}, []compat.Message{compat.TextMessage("user", "hi")}, TaskBypass},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := TaskKind(h, tt.msgs); got != tt.want {
				t.Errorf("TaskKind = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTasksNamedByHeader checks that every kind Tasks lists (the metrics' task labels) is one TaskKind returns:
// Open WebUI's header naming it selects it.
func TestTasksNamedByHeader(t *testing.T) {
	if len(Tasks()) != 9 {
		t.Errorf("Tasks() = %q, want Open WebUI's 9 background tasks", Tasks())
	}
	for _, kind := range Tasks() {
		h := http.Header{"X-Openwebui-Task": {kind}}
		if got := TaskKind(h, nil); got != kind {
			t.Errorf("TaskKind with X-OpenWebUI-Task %q = %q", kind, got)
		}
	}
}
