package compat

import (
	"fmt"

	"github.com/valyala/fastjson"
)

// The relay read chunks with fastjson before scanChunk; this reader is kept as the reference scanChunk is checked
// against (TestScanChunkAgreesWithFastjson) and measured against (BenchmarkReadChunk).

var chunkParsers fastjson.ParserPool

// readChunkFastjson is ReadChunk as it was: fastjson's parse of the whole chunk, then its members visited.
func readChunkFastjson(raw []byte, c *Chunk) error {
	p := chunkParsers.Get()
	defer chunkParsers.Put(p)
	v, err := p.ParseBytes(raw)
	if err != nil {
		return fmt.Errorf("parse chunk: %w", err)
	}
	o, err := v.Object()
	if err != nil {
		return fmt.Errorf("parse chunk: %w", err)
	}
	*c = Chunk{ID: c.ID, Model: c.Model, Choices: c.Choices[:0]}
	var id, model bool
	o.Visit(func(key []byte, v *fastjson.Value) {
		switch string(key) {
		case "id":
			c.ID, id = same(v, c.ID), true
		case "model":
			c.Model, model = same(v, c.Model), true
		case "created":
			c.Created = v.GetInt64()
		case "choices":
			for _, choice := range v.GetArray() {
				c.Choices = append(c.Choices, readChoice(choice))
			}
		case "usage":
			if v.Type() == fastjson.TypeObject {
				c.Usage = &Usage{
					PromptTokens:     v.GetInt("prompt_tokens"),
					CompletionTokens: v.GetInt("completion_tokens"),
					TotalTokens:      v.GetInt("total_tokens"),
				}
			}
		}
	})
	if !id {
		c.ID = ""
	}
	if !model {
		c.Model = ""
	}
	if len(c.Choices) == 0 {
		c.Choices = nil
	}
	return nil
}

func readChoice(choice *fastjson.Value) ChunkChoice {
	var c ChunkChoice
	o, _ := choice.Object()
	if o == nil {
		return c
	}
	o.Visit(func(key []byte, v *fastjson.Value) {
		switch string(key) {
		case "index":
			c.Index = v.GetInt()
		case "delta":
			delta, _ := v.Object()
			if delta == nil {
				return
			}
			delta.Visit(func(k []byte, v *fastjson.Value) {
				switch string(k) {
				case "role":
					c.Role = str(v)
				case "content":
					if v.Type() == fastjson.TypeString {
						c.Content, c.HasContent = str(v), true
					}
				case "tool_calls":
					c.Special = true
				case "refusal":
					c.Special = c.Special || v.Type() == fastjson.TypeString
				}
			})
		case "finish_reason":
			if v.Type() == fastjson.TypeString {
				c.FinishReason = str(v)
				c.Special = c.Special || c.FinishReason == "tool_calls"
			}
		}
	})
	return c
}

// str is v's string value, copied out of the parser's memory ("" unless v is a string).
func str(v *fastjson.Value) string {
	b, _ := v.StringBytes()
	return string(b)
}

// same is v's string value, or known when they are equal.
func same(v *fastjson.Value, known string) string {
	if b, _ := v.StringBytes(); string(b) != known {
		return string(b)
	}
	return known
}
