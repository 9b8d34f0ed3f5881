package compat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// Usage is OpenAI's token usage object.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Annotation is one of OpenAI's message annotations: a url_citation marks
// the span of the answer's content that cites a web page, the way OpenAI's
// search models return them (API reference, chat completion object,
// message.annotations; in streams, delta.annotations).
type Annotation struct {
	Type        string      `json:"type"`
	URLCitation URLCitation `json:"url_citation"`
}

// URLCitation is the cited page and where the content cites it: StartIndex
// and EndIndex count characters (Unicode code points) of the message
// content, the end excluded. The fields are in OpenAI's order.
type URLCitation struct {
	EndIndex   int    `json:"end_index"`
	StartIndex int    `json:"start_index"`
	Title      string `json:"title"`
	URL        string `json:"url"`
}

// Citation returns the url_citation annotation of url over [start, end).
func Citation(url, title string, start, end int) Annotation {
	return Annotation{Type: "url_citation", URLCitation: URLCitation{URL: url, Title: title, StartIndex: start, EndIndex: end}}
}

// Model is one entry of GET /v1/models.
type Model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// ModelList is the GET /v1/models body.
type ModelList struct {
	Object string  `json:"object"`
	Data   []Model `json:"data"`
}

// NewModel returns a model entry with object "model".
func NewModel(id, ownedBy string, created int64) Model {
	return Model{ID: id, Object: "model", Created: created, OwnedBy: ownedBy}
}

// Chunk is what the relay needs to know about one chat.completion.chunk,
// read from its raw JSON without decoding the rest.
type Chunk struct {
	ID      string
	Model   string
	Created int64
	// Choices are the choices the chunk carries, in array order. OpenAI
	// sends one per chunk, also when a request asks for n > 1 answers.
	Choices []ChunkChoice
	// Usage is set when the chunk carries a non-null usage object.
	Usage *Usage
}

// ChunkChoice is one element of a chunk's choices array.
type ChunkChoice struct {
	// Index is the choice's "index": which of the n answers it continues.
	Index int
	// Role, Content and HasContent describe the delta.
	Role       string
	Content    string
	HasContent bool
	// FinishReason is "" while null.
	FinishReason string
	// Special reports a delta with more than text: tool calls (or a finish for them) or a refusal.
	Special bool
}

// ParseChunk reads the relay's view of a raw chunk. What the Chunk keeps of raw is copied: nothing in it refers
// to raw's memory.
func ParseChunk(raw []byte) (Chunk, error) {
	var c Chunk
	err := ReadChunk(raw, &c)
	return c, err
}

// ReadChunk reads raw into c, the way a stream's chunks follow one another: c's Choices array is reused, and an
// id or model equal to c's is kept without a copy (OpenAI repeats them on every chunk). raw must be one JSON
// object (see scanChunk).
func ReadChunk(raw []byte, c *Chunk) error {
	if scanChunk(raw, c) {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("parse chunk: %w", err)
	}
	return fmt.Errorf("parse chunk: not a JSON object")
}

// SetChunkID returns raw with its "id" set to id.
func SetChunkID(raw []byte, id string) ([]byte, error) { return sjson.SetBytes(raw, "id", id) }

// SetDeltaRole returns raw with choices[pos].delta.role set.
func SetDeltaRole(raw []byte, pos int, role string) ([]byte, error) {
	return sjson.SetBytes(raw, "choices."+strconv.Itoa(pos)+".delta.role", role)
}

// SetDeltaContent returns raw with choices[pos].delta.content set to text.
func SetDeltaContent(raw []byte, pos int, text string) ([]byte, error) {
	return sjson.SetBytes(raw, "choices."+strconv.Itoa(pos)+".delta.content", text)
}

// DeleteDeltaContent returns raw without choices[pos].delta.content.
func DeleteDeltaContent(raw []byte, pos int) ([]byte, error) {
	return sjson.DeleteBytes(raw, "choices."+strconv.Itoa(pos)+".delta.content")
}

// Marshal is json.Marshal as OpenAI writes JSON: "<", ">" and "&" in strings stay as they are instead of
// becoming \u003c, \u003e and \u0026.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// SetMessageAnnotations returns a completion with choices[pos].message.annotations set.
func SetMessageAnnotations(raw []byte, pos int, anns []Annotation) ([]byte, error) {
	b, err := Marshal(anns)
	if err != nil {
		return nil, fmt.Errorf("set annotations: %w", err)
	}
	return sjson.SetRawBytes(raw, "choices."+strconv.Itoa(pos)+".message.annotations", b)
}

// CompletionInfo is what the proxy reads from a non-stream completion.
type CompletionInfo struct {
	// ID is the completion's id.
	ID string
	// Choices are the message contents of the choices, in array order.
	Choices []CompletionChoice
	Usage   *Usage
}

// CompletionChoice is the message content of one choice; HasContent is
// false when it is null or missing (a tool call).
type CompletionChoice struct {
	Content    string
	HasContent bool
}

// ParseCompletion reads a chat.completion body.
func ParseCompletion(raw []byte) (CompletionInfo, error) {
	if !gjson.ValidBytes(raw) {
		return CompletionInfo{}, fmt.Errorf("parse completion: invalid JSON")
	}
	r := gjson.GetManyBytes(raw, "choices", "usage", "id")
	info := CompletionInfo{ID: r[2].String()}
	r[0].ForEach(func(_, choice gjson.Result) bool {
		var c CompletionChoice
		if content := choice.Get("message.content"); content.Type == gjson.String {
			c.Content, c.HasContent = content.String(), true
		}
		info.Choices = append(info.Choices, c)
		return true
	})
	if r[1].IsObject() {
		info.Usage = &Usage{
			PromptTokens:     int(r[1].Get("prompt_tokens").Int()),
			CompletionTokens: int(r[1].Get("completion_tokens").Int()),
			TotalTokens:      int(r[1].Get("total_tokens").Int()),
		}
	}
	return info, nil
}

// SetMessageContent returns a completion with choices[pos].message.content
// set.
func SetMessageContent(raw []byte, pos int, text string) ([]byte, error) {
	return sjson.SetBytes(raw, "choices."+strconv.Itoa(pos)+".message.content", text)
}

// chunk wire types, in OpenAI's field order.
type chunkJSON struct {
	ID                string       `json:"id"`
	Object            string       `json:"object"`
	Created           int64        `json:"created"`
	Model             string       `json:"model"`
	SystemFingerprint *string      `json:"system_fingerprint,omitempty"`
	Choices           []choiceJSON `json:"choices"`
	Usage             *Usage       `json:"usage,omitempty"`
}

type deltaJSON struct {
	Role        string       `json:"role,omitempty"`
	Content     *string      `json:"content,omitempty"`
	Annotations []Annotation `json:"annotations,omitempty"`
}

type choiceJSON struct {
	Index        int       `json:"index"`
	Delta        deltaJSON `json:"delta"`
	Logprobs     *struct{} `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

// ChunkBuilder writes chat.completion.chunk objects that share one id,
// created time and model, for answers the proxy writes itself and for the
// deltas it adds to an upstream stream.
type ChunkBuilder struct {
	ID      string
	Model   string
	Created int64
	// Index is the choice index of the chunks it writes (see ForChoice).
	Index int
}

// ForChoice returns a builder for the answer with choice index i (a request
// with n > 1 gets n answers).
func (b ChunkBuilder) ForChoice(i int) ChunkBuilder {
	b.Index = i
	return b
}

func (b ChunkBuilder) build(d deltaJSON, finish *string) []byte {
	c := chunkJSON{ID: b.ID, Object: "chat.completion.chunk", Created: b.Created, Model: b.Model,
		Choices: []choiceJSON{{Index: b.Index, Delta: d, FinishReason: finish}}}
	out, _ := Marshal(c) // plain strings and ints: cannot fail
	return out
}

// Role returns the first chunk: the assistant role and empty content.
func (b ChunkBuilder) Role() []byte {
	empty := ""
	return b.build(deltaJSON{Role: "assistant", Content: &empty}, nil)
}

// Content returns a chunk whose delta carries text and, when there are any,
// annotations (an answer's citations travel together in one delta: the SDKs'
// stream helpers keep the annotations of the last delta that has them).
func (b ChunkBuilder) Content(text string, anns ...Annotation) []byte {
	return b.build(deltaJSON{Content: &text, Annotations: anns}, nil)
}

// Finish returns the chunk with an empty delta and finish_reason.
func (b ChunkBuilder) Finish(reason string) []byte {
	return b.build(deltaJSON{}, &reason)
}

// Usage returns the usage chunk: "choices": [] and the usage object.
func (b ChunkBuilder) Usage(u Usage) []byte {
	c := chunkJSON{ID: b.ID, Object: "chat.completion.chunk", Created: b.Created, Model: b.Model,
		Choices: []choiceJSON{}, Usage: &u}
	out, _ := Marshal(c)
	return out
}

type completionJSON struct {
	ID      string                 `json:"id"`
	Object  string                 `json:"object"`
	Created int64                  `json:"created"`
	Model   string                 `json:"model"`
	Choices []completionChoiceJSON `json:"choices"`
	Usage   Usage                  `json:"usage"`
}

type completionChoiceJSON struct {
	Index        int         `json:"index"`
	Message      messageJSON `json:"message"`
	Logprobs     *struct{}   `json:"logprobs"`
	FinishReason string      `json:"finish_reason"`
}

type messageJSON struct {
	Role        string       `json:"role"`
	Content     string       `json:"content"`
	Refusal     *string      `json:"refusal"`
	Annotations []Annotation `json:"annotations,omitempty"`
}

// Completion returns a full chat.completion object answering with text and
// its annotations.
func (b ChunkBuilder) Completion(text string, u Usage, anns []Annotation) []byte {
	return b.CompletionN(text, 1, u, anns)
}

// CompletionN is Completion with n identical choices, for a request that
// asks for n answers; u counts them all.
func (b ChunkBuilder) CompletionN(text string, n int, u Usage, anns []Annotation) []byte {
	c := completionJSON{ID: b.ID, Object: "chat.completion", Created: b.Created, Model: b.Model, Usage: u}
	for i := range max(n, 1) {
		c.Choices = append(c.Choices, completionChoiceJSON{Index: i,
			Message: messageJSON{Role: "assistant", Content: text, Annotations: anns}, FinishReason: "stop"})
	}
	out, _ := Marshal(c)
	return out
}

// SplitDeltas cuts text into stream deltas of about size bytes, at spaces
// where possible, so a locally written answer streams like a model's.
func SplitDeltas(text string, size int) []string {
	if size <= 0 {
		size = 32
	}
	var out []string
	for len(text) > size {
		cut := strings.IndexByte(text[size:], ' ')
		if cut < 0 {
			break
		}
		cut += size + 1
		out = append(out, text[:cut])
		text = text[cut:]
	}
	if text != "" {
		out = append(out, text)
	}
	return out
}
