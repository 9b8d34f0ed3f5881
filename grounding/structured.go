package grounding

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ragproxy/ragproxy/compat"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/server"
)

// A structured request asks for an answer a program reads: JSON (OpenAI's response_format json_object or
// json_schema, "Structured Outputs") or a tool call (tools, or the older functions). Such a request still gets
// the context, but its answer text is never changed: no Sources list is appended and the link filter does not
// rewrite URLs inside JSON string values, either of which breaks JSON.parse and the SDKs' parse() helpers. Its
// sources travel as annotations only (no Open WebUI source events, no sources field). ragproxy's own answers
// (offline, "I don't know", an FAQ match) are JSON in the request's format: for json_object
// {"answer": TEXT, "sources": [{"title": ..., "url": ...}]}, for json_schema a value built from the schema (see
// schemaFiller). A request with tools and no response_format gets ragproxy's own answer as a plain assistant
// message: without a model there is no tool to call.

// format is what a structured request asks for.
type format struct {
	// json reports a JSON answer (json_object or json_schema); schema is json_schema's schema, nil for
	// json_object.
	json   bool
	schema json.RawMessage
	// tools reports tools or functions.
	tools bool
}

// structured returns the format req asks for, nil for a plain text request.
func structured(req *compat.ChatRequest) *format {
	if req == nil {
		return nil
	}
	var f format
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	}
	if raw, ok := req.Fields["response_format"]; ok && json.Unmarshal(raw, &rf) == nil {
		switch rf.Type {
		case "json_object":
			f.json = true
		case "json_schema":
			f.json, f.schema = true, rf.JSONSchema.Schema
		}
	}
	for _, key := range []string{"tools", "functions"} {
		var list []json.RawMessage
		if raw, ok := req.Fields[key]; ok && json.Unmarshal(raw, &list) == nil && len(list) > 0 {
			f.tools = true
		}
	}
	if !f.json && !f.tools {
		return nil
	}
	return &f
}

// structure turns a Grounding for a plain request into one for a structured request in format f: an answer
// written here becomes JSON in the request's format (tools alone keep the text), a model's answer is passed
// through unchanged with its citations as annotations, and no source events go out.
func (g *Grounder) structure(req *server.GroundRequest, f *format, gr *server.Grounding) *server.Grounding {
	out := *gr
	out.Events = nil
	if out.NewFilter != nil {
		if sf, ok := out.NewFilter().(*sourcesFilter); ok {
			res, limit := sf.res, sf.max
			out.NewFilter = func() server.ContentFilter { return &structuredFilter{res: res, max: limit} }
		}
	}
	if a := out.Answer; a != nil && f.json {
		var sources []Source
		for _, an := range a.Annotations {
			sources = append(sources, Source{URL: an.URLCitation.URL, Title: an.URLCitation.Title})
		}
		text := jsonAnswer(f.schema, proseOf(a.Text), sources)
		out.Answer = g.answer(req, text)
		out.Answer.Annotations = annotateSpans(text, sources)
	}
	return &out
}

// proseOf is an answer written here without its Sources list, which the JSON carries as "sources".
func proseOf(text string) string {
	for _, h := range sourcesHeadings() {
		if i := strings.LastIndex(text, h); i >= 0 {
			text = text[:i]
			break
		}
	}
	return strings.TrimSpace(text)
}

// structuredFilter passes a structured answer through as it is and cites, once it has ended, the pages of the
// context the answer names (Cited) as annotations spanning each page's URL in the answer.
type structuredFilter struct {
	res    *retrieval.Result
	max    int
	answer strings.Builder
}

var _ server.Citer = (*structuredFilter)(nil)

func (f *structuredFilter) Filter(delta string) string {
	f.answer.WriteString(delta)
	return delta
}

func (f *structuredFilter) Trailer() string { return "" }

// Annotations implements server.Citer; an answer without text (a tool call) cites nothing, so that a stream
// ending in tool_calls gets no extra delta.
func (f *structuredFilter) Annotations() []compat.Annotation {
	text := f.answer.String()
	if strings.TrimSpace(text) == "" {
		return nil
	}
	return annotateSpans(text, Cited(text, f.res, f.max))
}

// Events implements server.Citer: a structured answer sends no source events.
func (f *structuredFilter) Events() []json.RawMessage { return nil }

// annotateSpans returns a url_citation per source: spanning the first occurrence of its URL in text, or the
// whole text when the text does not hold it (a JSON answer that cites the page without writing its URL).
func annotateSpans(text string, sources []Source) []compat.Annotation {
	var out []compat.Annotation
	whole := utf8.RuneCountInString(text)
	for _, s := range sources {
		start, end := 0, whole
		if i := strings.Index(text, s.URL); i >= 0 {
			start = utf8.RuneCountInString(text[:i])
			end = start + utf8.RuneCountInString(s.URL)
		}
		out = append(out, compat.Citation(s.URL, s.Title, start, end))
	}
	return out
}

// jsonAnswer writes text and sources as JSON: schema's shape when one is given and can be filled, else
// {"answer": text, "sources": [{"title", "url"}]}.
func jsonAnswer(schema json.RawMessage, text string, sources []Source) string {
	var v any = map[string]any{"answer": text, "sources": sourceObjects(sources)}
	var root map[string]any
	if len(schema) > 0 && json.Unmarshal(schema, &root) == nil {
		f := &schemaFiller{root: root, text: text, sources: sources}
		if filled, ok := f.fill(root, "", 0); ok {
			v = filled
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // URLs keep their "&", so the annotations find them
	if err := enc.Encode(v); err != nil {
		return `{"answer":""}`
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func sourceObjects(sources []Source) []map[string]string {
	out := make([]map[string]string, 0, len(sources))
	for _, s := range sources {
		out = append(out, map[string]string{"title": s.Title, "url": s.URL})
	}
	return out
}

// schemaFiller builds a value that fits a JSON Schema (the subset OpenAI's Structured Outputs accept: object,
// array, string, number, integer, boolean, null, enum, const, anyOf, $ref to $defs) from an answer: the answer's
// text goes to one string property (one named answer, response, text, content, message, reply, output or
// result, else the object's first string property by name), source URLs and titles to an array property named
// sources, links, urls, citations or references, and every other property gets its type's empty value: "", 0
// (or the minimum), false, [], null, the first enum value, the const. Every property of an object is filled, so
// every required one is.
type schemaFiller struct {
	root     map[string]any
	text     string
	sources  []Source
	usedText bool
}

var (
	answerNames = []string{"answer", "response", "text", "content", "message", "reply", "output", "result"}
	sourceNames = []string{"sources", "links", "urls", "citations", "references"}
)

// maxSchemaDepth bounds the nesting filled, so that a recursive schema ends.
const maxSchemaDepth = 8

// fill returns a value for schema s, the value of the property name (empty at the root); ok is false for a
// schema it cannot fill.
func (f *schemaFiller) fill(s map[string]any, name string, depth int) (any, bool) {
	if depth > maxSchemaDepth {
		return nil, false
	}
	if ref, ok := s["$ref"].(string); ok {
		t, ok := f.resolve(ref)
		if !ok {
			return nil, false
		}
		return f.fill(t, name, depth+1)
	}
	if c, ok := s["const"]; ok {
		return c, true
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0], true
	}
	if alts, ok := s["anyOf"].([]any); ok {
		for _, a := range alts {
			if as, ok := a.(map[string]any); ok {
				if v, ok := f.fill(as, name, depth+1); ok {
					return v, true
				}
			}
		}
		return nil, false
	}
	switch schemaType(s) {
	case "object":
		props, _ := s["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		for k := range props {
			names = append(names, k)
		}
		slices.Sort(names)
		answer := f.answerProperty(props, names)
		out := make(map[string]any, len(props))
		for _, k := range names {
			ps, ok := props[k].(map[string]any)
			if !ok {
				return nil, false
			}
			var v any
			if k == answer && !f.usedText {
				f.usedText = true
				v = f.text
			} else if v, ok = f.fill(ps, k, depth+1); !ok {
				return nil, false
			}
			out[k] = v
		}
		return out, true
	case "array":
		items, _ := s["items"].(map[string]any)
		out := []any{}
		if items != nil && slices.Contains(sourceNames, strings.ToLower(name)) {
			for _, src := range f.sources {
				if v, ok := f.source(items, src, depth+1); ok {
					out = append(out, v)
				}
			}
		}
		return out, true
	case "string":
		if strings.ToLower(name) == "url" && len(f.sources) > 0 {
			return f.sources[0].URL, true
		}
		if !f.usedText && slices.Contains(answerNames, strings.ToLower(name)) {
			f.usedText = true
			return f.text, true
		}
		return "", true
	case "integer", "number":
		if m, ok := s["minimum"].(float64); ok {
			return m, true
		}
		return 0, true
	case "boolean":
		return false, true
	case "null":
		return nil, true
	}
	return nil, false
}

// answerProperty is the string property of an object that gets the answer's text.
func (f *schemaFiller) answerProperty(props map[string]any, names []string) string {
	isString := func(k string) bool {
		ps, _ := props[k].(map[string]any)
		_, enum := ps["enum"]
		_, c := ps["const"]
		return ps != nil && schemaType(ps) == "string" && !enum && !c
	}
	for _, want := range answerNames {
		for _, k := range names {
			if strings.ToLower(k) == want && isString(k) {
				return k
			}
		}
	}
	for _, k := range names {
		if isString(k) && !slices.Contains(sourceNames, strings.ToLower(k)) && strings.ToLower(k) != "url" {
			return k
		}
	}
	return ""
}

// source is one source as an item of a sources array: its URL for a string item, an object's url and title
// properties (link, href; name) for an object item.
func (f *schemaFiller) source(items map[string]any, src Source, depth int) (any, bool) {
	if ref, ok := items["$ref"].(string); ok {
		t, ok := f.resolve(ref)
		if !ok {
			return nil, false
		}
		items = t
	}
	switch schemaType(items) {
	case "string":
		return src.URL, true
	case "object":
		sub := &schemaFiller{root: f.root, usedText: true}
		v, ok := sub.fill(items, "", depth)
		obj, isObj := v.(map[string]any)
		if !ok || !isObj {
			return nil, false
		}
		for k := range obj {
			switch strings.ToLower(k) {
			case "url", "link", "href":
				obj[k] = src.URL
			case "title", "name":
				obj[k] = src.Title
			}
		}
		return obj, true
	}
	return nil, false
}

// resolve finds a local reference, "#/$defs/NAME" or "#/definitions/NAME".
func (f *schemaFiller) resolve(ref string) (map[string]any, bool) {
	for _, p := range []string{"#/$defs/", "#/definitions/"} {
		if name, ok := strings.CutPrefix(ref, p); ok {
			defs, _ := f.root[strings.Trim(p[1:], "/")].(map[string]any)
			t, ok := defs[name].(map[string]any)
			return t, ok
		}
	}
	if ref == "#" {
		return f.root, true
	}
	return nil, false
}

// schemaType is a schema's type: its "type", the first that is not "null" of a list of types, or "object" for a
// schema with properties and no type.
func schemaType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x, ok := x.(string); ok && x != "null" {
				return x
			}
		}
		return "null"
	}
	if _, ok := s["properties"]; ok {
		return "object"
	}
	return ""
}
