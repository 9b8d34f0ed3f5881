package compat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

// ChatRequest is a decoded POST /v1/chat/completions body. Fields holds every
// top-level key exactly as the client sent it; the other members are the few
// values the proxy reads.
type ChatRequest struct {
	// Fields is the whole body, key by key, as raw JSON.
	Fields map[string]json.RawMessage
	// Messages are the validated messages.
	Messages []Message
	// Model is the "model" string ("" when absent).
	Model string
	// Stream reports "stream": true.
	Stream bool
	// IncludeUsage reports "stream_options": {"include_usage": true}.
	IncludeUsage bool
	// N is the number of answers asked for ("n", 1 to 128; default 1).
	N int
}

// Message is one chat message. Raw keeps the object as sent so tool calls,
// names and vendor fields survive.
type Message struct {
	Role       string
	Content    json.RawMessage // string, array of parts, null, or absent (nil)
	ToolCallID string
	Raw        json.RawMessage
	// text is Text's result, worked out once when the message was decoded or built: a long message is then
	// not decoded again each time its text is read.
	text    string
	hasText bool
}

// ContentPart is one element of an array content.
type ContentPart struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
}

// Text returns the message's text: the string content, or the text parts of
// an array content joined by newlines.
func (m Message) Text() string {
	if m.hasText {
		return m.text
	}
	return contentText(m.Content)
}

// contentText is the text of a message content (see Message.Text).
func contentText(content json.RawMessage) string {
	c := bytes.TrimSpace(content)
	if len(c) == 0 {
		return ""
	}
	switch c[0] {
	case '"':
		var s string
		if json.Unmarshal(c, &s) == nil {
			return s
		}
	case '[':
		var parts []ContentPart
		if json.Unmarshal(c, &parts) == nil {
			var b strings.Builder
			for _, p := range parts {
				if p.Text == "" {
					continue
				}
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(p.Text)
			}
			return b.String()
		}
	}
	return ""
}

// Roles accepted in messages. "function" is OpenAI's deprecated role, still
// accepted by the API, so older clients keep working.
var validRoles = map[string]bool{
	"system": true, "developer": true, "user": true, "assistant": true, "tool": true, "function": true,
}

// interpretedKeys are the body fields the proxy itself reads.
var interpretedKeys = []string{"model", "messages", "stream", "stream_options", "n"}

// checkKeys refuses a body whose top level names a field the proxy reads twice, or in another case ("sTream"):
// the proxy reads one spelling while an upstream whose JSON decoder folds case, or keeps the other duplicate,
// could read another, and the two would disagree on what was asked (a stream the proxy does not expect).
func checkKeys(body []byte) error {
	var err error
	var seen uint // bit i: interpretedKeys[i] was seen
	gjson.ParseBytes(body).ForEach(func(key, _ gjson.Result) bool {
		for i, k := range interpretedKeys {
			switch {
			case key.Str == k && seen&(1<<i) != 0:
				err = InvalidRequest(k, "duplicate_parameter", "Duplicate request argument supplied: %s", k)
			case key.Str == k:
				seen |= 1 << i
			case len(key.Str) == len(k) && strings.EqualFold(key.Str, k):
				err = InvalidRequest(key.Str, "unknown_parameter", "Unrecognized request argument supplied: %s", key.Str)
			}
		}
		return err == nil
	})
	return err
}

// DecodeChatRequest decodes and validates a chat-completions body. Any
// problem is an *APIError with status 400 and, where it applies, param naming
// the offending field the way OpenAI does ("messages[2].role").
func DecodeChatRequest(body []byte) (*ChatRequest, error) {
	// The request's fields and messages are slices of one copy of the body (the caller's buffer may be reused
	// once it returns), not a copy each.
	body = bytes.Clone(body)
	fields, err := decodeFields(body)
	if err != nil || fields == nil {
		if err == nil {
			err = fmt.Errorf("decode chat request: body is null")
		}
		return nil, InvalidJSON(fmt.Errorf("decode chat request: %w", err))
	}
	if err := checkKeys(body); err != nil {
		return nil, err
	}
	req := &ChatRequest{Fields: fields}
	if raw, ok := fields["model"]; ok && !isNull(raw) {
		if err := decodeString(raw, &req.Model); err != nil {
			return nil, InvalidRequest("model", "invalid_type", "Invalid type for 'model': expected a string.")
		}
	}
	if raw, ok := fields["stream"]; ok && !isNull(raw) {
		if err := decodeBool(raw, &req.Stream); err != nil {
			return nil, InvalidRequest("stream", "invalid_type", "Invalid type for 'stream': expected a boolean.")
		}
	}
	if raw, ok := fields["stream_options"]; ok && !isNull(raw) {
		so, err := decodeFields(raw)
		if err != nil || so == nil {
			return nil, InvalidRequest("stream_options", "invalid_type", "Invalid type for 'stream_options': expected an object.")
		}
		if iu, ok := so["include_usage"]; ok && !isNull(iu) {
			if err := decodeBool(iu, &req.IncludeUsage); err != nil {
				return nil, InvalidRequest("stream_options.include_usage", "invalid_type",
					"Invalid type for 'stream_options.include_usage': expected a boolean.")
			}
		}
	}
	req.N = 1
	if raw, ok := fields["n"]; ok && !isNull(raw) {
		var n float64
		if err := json.Unmarshal(raw, &n); err != nil || n != math.Trunc(n) {
			return nil, InvalidRequest("n", "invalid_type", "Invalid type for 'n': expected an integer.")
		}
		switch {
		case n < 1:
			return nil, InvalidRequest("n", "integer_below_min_value",
				"Invalid 'n': integer below minimum value. Expected a value >= 1, but got %s instead.", strconv.FormatFloat(n, 'f', -1, 64))
		case n > maxN:
			return nil, InvalidRequest("n", "integer_above_max_value",
				"Invalid 'n': integer above maximum value. Expected a value <= %d, but got %s instead.", maxN, strconv.FormatFloat(n, 'f', -1, 64))
		}
		req.N = int(n)
	}
	msgs, err := decodeMessages(fields["messages"])
	if err != nil {
		return nil, err
	}
	req.Messages = msgs
	return req, nil
}

// decodeFields is json.Unmarshal of body into a map of raw values, nil for null. An object whose keys need no
// unescaping, the usual body, is read in one pass without encoding/json's reflection; anything else, errors
// included, goes to json.Unmarshal, so the result and the error are json.Unmarshal's either way (the decoder's
// fuzz test compares them).
func decodeFields(body []byte) (map[string]json.RawMessage, error) {
	if fields, ok := plainFields(body); ok {
		return fields, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, err
	}
	return fields, nil
}

// plainFields reads a valid JSON object whose keys are valid UTF-8 without escapes; ok is false for anything else.
func plainFields(body []byte) (fields map[string]json.RawMessage, ok bool) {
	if !gjson.ValidBytes(body) {
		return nil, false
	}
	obj := gjson.ParseBytes(body)
	if !obj.IsObject() {
		return nil, false
	}
	fields, ok = map[string]json.RawMessage{}, true
	obj.ForEach(func(key, value gjson.Result) bool {
		if len(key.Raw) != len(key.Str)+2 || strings.IndexByte(key.Raw, '\\') >= 0 || !utf8.ValidString(key.Str) {
			ok = false
			return false
		}
		fields[key.Str] = within(body, value)
		return true
	})
	return fields, ok
}

// within is v's raw JSON as the slice of src that gjson read it from (src parsed whole, or v an element of such
// a parse), capped so that appending to it cannot overwrite what follows; a copy when v's offset does not point
// there.
func within(src []byte, v gjson.Result) json.RawMessage {
	if i, j := v.Index, v.Index+len(v.Raw); i > 0 && j <= len(src) && string(src[i:j]) == v.Raw {
		return src[i:j:j]
	}
	return json.RawMessage(v.Raw)
}

// decodeString is json.Unmarshal of a raw value into a string, without reflection for a string with no escapes.
func decodeString(raw json.RawMessage, s *string) error {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		*s = string(raw[1 : n-1])
		return nil
	}
	return json.Unmarshal(raw, s)
}

// decodeBool is json.Unmarshal of a raw value into a bool, without reflection for true and false.
func decodeBool(raw json.RawMessage, b *bool) error {
	switch string(raw) {
	case "true":
		*b = true
		return nil
	case "false":
		*b = false
		return nil
	}
	return json.Unmarshal(raw, b)
}

// maxN is OpenAI's limit on "n".
const maxN = 128

func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

func decodeMessages(raw json.RawMessage) ([]Message, error) {
	if raw == nil || isNull(raw) {
		return nil, InvalidRequest("messages", "missing_required_parameter", "Missing required parameter: 'messages'.")
	}
	// The whole body was validated as JSON already: the messages are read with gjson, without validating and
	// copying each level again (a long message would be scanned once per level).
	list := gjson.ParseBytes(raw)
	if !list.IsArray() {
		return nil, InvalidRequest("messages", "invalid_type", "Invalid type for 'messages': expected an array of objects.")
	}
	var items []gjson.Result
	list.ForEach(func(_, v gjson.Result) bool {
		items = append(items, v)
		return true
	})
	if len(items) == 0 {
		return nil, InvalidRequest("messages", "empty_array",
			"Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	}
	msgs := make([]Message, 0, len(items))
	for i, item := range items {
		m, err := decodeMessage(i, within(raw, item), gjson.Parse(item.Raw))
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// messageFields are the fields of a message that decodeMessage reads; a key sent twice keeps its last value,
// as json.Unmarshal into a map does.
type messageFields struct {
	role, content, toolCallID            json.RawMessage
	hasRole, hasContent, hasID, extraOut bool // extraOut: tool_calls, function_call, refusal or audio is present
}

// decodeMessage decodes the message raw, which parsed is gjson's reading of.
func decodeMessage(i int, raw json.RawMessage, parsed gjson.Result) (Message, error) {
	at := func() string { return "messages[" + strconv.Itoa(i) + "]" }
	if !parsed.IsObject() {
		return Message{}, InvalidRequest(at(), "invalid_type", "Invalid type for '%s': expected an object.", at())
	}
	var f messageFields
	parsed.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "role":
			f.role, f.hasRole = within(raw, v), true
		case "content":
			f.content, f.hasContent = within(raw, v), true
		case "tool_call_id":
			f.toolCallID, f.hasID = within(raw, v), true
		case "tool_calls", "function_call", "refusal", "audio":
			f.extraOut = true
		}
		return true
	})
	m := Message{Raw: raw}
	if !f.hasRole {
		return Message{}, InvalidRequest(at()+".role", "missing_required_parameter", "Missing required parameter: '%s.role'.", at())
	}
	if err := decodeString(f.role, &m.Role); err != nil {
		return Message{}, InvalidRequest(at()+".role", "invalid_type", "Invalid type for '%s.role': expected a string.", at())
	}
	if !validRoles[m.Role] {
		return Message{}, InvalidRequest(at()+".role", "invalid_value",
			"Invalid value: '%s'. Supported values are: 'system', 'developer', 'user', 'assistant', and 'tool'.", truncate(m.Role, 40))
	}
	hasText := f.hasContent && !isNull(f.content)
	if hasText {
		m.Content = f.content
		text, err := checkContent(func() string { return at() + ".content" }, f.content)
		if err != nil {
			return Message{}, err
		}
		m.text, m.hasText = text, true
	}
	switch m.Role {
	case "assistant":
		// content may be null or absent when the assistant called tools or refused.
		if !hasText && !f.extraOut {
			return Message{}, InvalidRequest(at()+".content", "missing_required_parameter",
				"Missing required parameter: '%s.content'.", at())
		}
	case "tool":
		if !hasText {
			return Message{}, InvalidRequest(at()+".content", "missing_required_parameter",
				"Missing required parameter: '%s.content'.", at())
		}
		if !f.hasID || decodeString(f.toolCallID, &m.ToolCallID) != nil || m.ToolCallID == "" {
			return Message{}, InvalidRequest(at()+".tool_call_id", "missing_required_parameter",
				"Missing required parameter: '%s.tool_call_id'.", at())
		}
	case "function":
		// Legacy: content may be null.
	default:
		if !hasText {
			return Message{}, InvalidRequest(at()+".content", "missing_required_parameter",
				"Missing required parameter: '%s.content'.", at())
		}
	}
	return m, nil
}

// checkContent validates a message content and returns its text: a string, or an array of part objects that each
// carry a string "type" (the parts' own fields are the upstream's business). at names the content's parameter
// ("messages[2].content") for an error; it is not built for a valid content.
func checkContent(at func() string, raw json.RawMessage) (string, error) {
	c := bytes.TrimSpace(raw)
	switch c[0] {
	case '"':
		var s string
		if decodeString(c, &s) != nil {
			return "", InvalidRequest(at(), "invalid_type", "Invalid type for '%s': expected a string or an array of content parts.", at())
		}
		return s, nil
	case '[':
		var parts []map[string]json.RawMessage
		if json.Unmarshal(c, &parts) != nil {
			return "", InvalidRequest(at(), "invalid_type", "Invalid type for '%s': expected an array of content part objects.", at())
		}
		for j, p := range parts {
			var typ string
			if p == nil || json.Unmarshal(p["type"], &typ) != nil || typ == "" {
				part := fmt.Sprintf("%s[%d].type", at(), j)
				return "", InvalidRequest(part, "missing_required_parameter", "Missing required parameter: '%s'.", part)
			}
		}
		return contentText(raw), nil
	}
	return "", InvalidRequest(at(), "invalid_type", "Invalid type for '%s': expected a string or an array of content parts.", at())
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// UpstreamBody returns the body to send upstream: the client's fields with
// "model" set to model (kept as sent when model is ""), "messages" replaced
// by messages when it is non-nil, and, for streams, stream_options
// include_usage forced on so the proxy always sees token counts (the relay
// strips the usage chunk again when the client did not ask for it).
func (r *ChatRequest) UpstreamBody(model string, messages json.RawMessage) ([]byte, error) {
	out := make(map[string]json.RawMessage, len(r.Fields)+1)
	for k, v := range r.Fields {
		out[k] = v
	}
	if model != "" {
		b, err := json.Marshal(model)
		if err != nil {
			return nil, fmt.Errorf("upstream body: %w", err)
		}
		out["model"] = b
	}
	if messages != nil {
		out["messages"] = messages
	}
	if r.Stream && !r.IncludeUsage {
		so := map[string]json.RawMessage{}
		if raw, ok := r.Fields["stream_options"]; ok && !isNull(raw) {
			if err := json.Unmarshal(raw, &so); err != nil {
				return nil, fmt.Errorf("upstream body: stream_options: %w", err)
			}
		}
		so["include_usage"] = json.RawMessage("true")
		b, err := json.Marshal(so)
		if err != nil {
			return nil, fmt.Errorf("upstream body: %w", err)
		}
		out["stream_options"] = b
	}
	b, err := marshalFields(out)
	if err != nil {
		return nil, fmt.Errorf("upstream body: %w", err)
	}
	return b, nil
}

// marshalFields encodes an object of raw values exactly as json.Marshal encodes the map (keys sorted, each value
// compacted, with "<", ">", "&", U+2028 and U+2029 in strings escaped), without its reflection: the upstream
// body is encoded on every request.
func marshalFields(fields map[string]json.RawMessage) ([]byte, error) {
	keys := make([]string, 0, len(fields))
	size := 2
	for k, v := range fields {
		keys = append(keys, k)
		size += len(k) + len(v) + 4
	}
	slices.Sort(keys)
	var buf bytes.Buffer
	buf.Grow(size)
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		if plainKey(k) {
			buf.WriteByte('"')
			buf.WriteString(k)
			buf.WriteByte('"')
		} else {
			q, err := json.Marshal(k)
			if err != nil {
				return nil, err
			}
			buf.Write(q)
		}
		buf.WriteByte(':')
		v := fields[k]
		if v == nil {
			buf.WriteString("null")
			continue
		}
		if !bytes.ContainsAny(v, "<>&\u2028\u2029") {
			if err := json.Compact(&buf, v); err != nil {
				return nil, err
			}
			continue
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, v); err != nil {
			return nil, err
		}
		json.HTMLEscape(&buf, compact.Bytes())
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// plainKey reports whether k is written as it is between quotes: ASCII letters, digits, "_", "-" and ".".
func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// MessagesJSON encodes messages as the "messages" array, each message's Raw
// object when present.
func MessagesJSON(msgs []Message) (json.RawMessage, error) {
	raws := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		if m.Raw != nil {
			raws[i] = m.Raw
			continue
		}
		obj := map[string]any{"role": m.Role}
		if m.Content != nil {
			obj["content"] = m.Content
		}
		if m.ToolCallID != "" {
			obj["tool_call_id"] = m.ToolCallID
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("encode messages: %w", err)
		}
		raws[i] = b
	}
	b, err := json.Marshal(raws)
	if err != nil {
		return nil, fmt.Errorf("encode messages: %w", err)
	}
	return b, nil
}

// TextMessage returns a message with a string content.
func TextMessage(role, text string) Message {
	c, _ := json.Marshal(text)
	return Message{Role: role, Content: c, text: text, hasText: true}
}

// NewTextRequest builds one of the proxy's own chat requests (query analysis, summaries) as if a client had sent
// it: model ("" for the upstream's default), text messages and extra body fields (temperature, response_format,
// ...).
func NewTextRequest(model string, msgs []Message, extra map[string]any) (*ChatRequest, error) {
	raw, err := MessagesJSON(msgs)
	if err != nil {
		return nil, fmt.Errorf("text request: %w", err)
	}
	body := map[string]any{"model": model, "messages": raw}
	for k, v := range extra {
		body[k] = v
	}
	b, err := Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("text request: %w", err)
	}
	req, err := DecodeChatRequest(b)
	if err != nil {
		return nil, fmt.Errorf("text request: %w", err)
	}
	return req, nil
}
