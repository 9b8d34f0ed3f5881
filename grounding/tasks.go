package grounding

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/server"
)

// offlineTask answers a client's background task without a model, in the format the task asks for: the JSON of a
// json_schema response_format; the JSON object Open WebUI's task prompts ask for ({"title": ...}, {"tags": [...]},
// {"text": ...} for autocompletion, ...); else plain text (LibreChat's completion title method reads the whole
// answer as the title).
func offlineTask(req *server.GroundRequest) string {
	// The title quotes the user, whose text may carry links and HTML; no context allows a link.
	title := CleanAnswer(chatTitle(req.Messages, req.TaskPrompts), nil)
	format, schema := responseFormat(req.Request)
	if format == "json_schema" && schema != nil {
		b, err := compat.Marshal(fromSchema(schema, "", title))
		if err == nil {
			return string(b)
		}
	}
	switch req.Task {
	case server.TaskTitle:
		if format == "json_object" || req.TaskHeading { // Open WebUI's task prompts all ask for JSON
			b, _ := compat.Marshal(map[string]string{"title": title})
			return string(b)
		}
		return title
	case server.TaskTags:
		return `{"tags":[]}`
	case server.TaskFollowUps:
		return `{"follow_ups":[]}`
	case server.TaskQueries:
		return `{"queries":[]}`
	case server.TaskAutocomplete:
		return `{"text":""}` // no model, no completion: Open WebUI then suggests nothing
	case server.TaskTools:
		return `{"tool_calls":[]}`
	case server.TaskEmoji:
		return "🙂"
	}
	return "Retrieval is off for this request and no language model is configured."
}

// responseFormat reads a request's response_format: its type, and for json_schema the schema.
func responseFormat(req *compat.ChatRequest) (format string, schema map[string]any) {
	if req == nil {
		return "", nil
	}
	raw, ok := req.Fields["response_format"]
	if !ok {
		return "", nil
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema map[string]any `json:"schema"`
		} `json:"json_schema"`
	}
	if json.Unmarshal(raw, &rf) != nil {
		return "", nil
	}
	return rf.Type, rf.JSONSchema.Schema
}

// fromSchema builds a value that validates against a JSON schema, with title in string properties named for a
// title and "English" in those named for a language (the language a title prompt asks to detect; LibreChat's
// own default when detection fails).
func fromSchema(schema map[string]any, name, title string) any {
	if enum, ok := schema["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	if c, ok := schema["const"]; ok {
		return c
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		if opts, ok := schema[key].([]any); ok && len(opts) > 0 {
			if first, ok := opts[0].(map[string]any); ok {
				return fromSchema(first, name, title)
			}
		}
	}
	typ, _ := schema["type"].(string)
	if types, ok := schema["type"].([]any); ok && len(types) > 0 {
		typ, _ = types[0].(string)
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for k, v := range props {
			if sub, ok := v.(map[string]any); ok {
				out[k] = fromSchema(sub, k, title)
			}
		}
		return out
	case "array":
		return []any{}
	case "integer", "number":
		return 0
	case "boolean":
		return false
	case "null":
		return nil
	}
	switch n := strings.ToLower(name); {
	case strings.Contains(n, "title"):
		return title
	case strings.Contains(n, "lang"):
		return "English"
	}
	return ""
}

// chatTitle titles a conversation from its first user line: the chat history a title prompt quotes ("USER: ..."
// in Open WebUI's, "User: ..." in LibreChat's), else the first user message that is not a task prompt
// (taskPrompts[i] marks msgs[i] as one, GroundRequest.TaskPrompts).
func chatTitle(msgs []compat.Message, taskPrompts []bool) string {
	var first string
	for i, m := range msgs {
		if m.Role != "user" {
			continue
		}
		text := m.Text()
		if line, ok := historyUserLine(text); ok {
			return titleOf(line)
		}
		if first == "" && !(i < len(taskPrompts) && taskPrompts[i]) {
			first = text
		}
	}
	if strings.TrimSpace(first) == "" {
		return "New Chat"
	}
	return titleOf(first)
}

// historyUserLine finds the first "user:" line of a prompt that quotes a chat history.
func historyUserLine(text string) (string, bool) {
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if len(line) > 5 && strings.EqualFold(line[:5], "user:") {
			if rest := strings.TrimSpace(line[5:]); rest != "" {
				return rest, true
			}
		}
	}
	return "", false
}

// titleSmallWords stay lowercase inside a title.
var titleSmallWords = []string{"a", "an", "and", "as", "at", "by", "for", "in", "of", "on", "or", "the", "to"}

// titleOf is a title of at most five words from text, in title case and without punctuation, as both clients'
// title prompts ask.
func titleOf(text string) string {
	words := strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '-' && r != '$' && r != '%'
	})
	var b bytes.Buffer
	n := 0
	for _, w := range words {
		w = strings.Trim(w, "'-")
		if w == "" {
			continue
		}
		if n == 5 {
			break
		}
		if n > 0 {
			b.WriteByte(' ')
		}
		lower := strings.ToLower(w)
		if n > 0 && slices.Contains(titleSmallWords, lower) {
			b.WriteString(lower)
		} else {
			r := []rune(w)
			r[0] = unicode.ToUpper(r[0])
			b.WriteString(string(r))
		}
		n++
	}
	if n == 0 {
		return "New Chat"
	}
	return b.String()
}
