package compat

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// A chunk scanner reads a chat.completion.chunk in one pass over its bytes, checking as it goes that they are
// JSON (RFC 8259's structure, escapes, numbers, literals and nesting; NaN and the infinities besides, see
// nonFinite) and decoding only the members the relay reads; every other value is stepped over without building
// anything. A relay reads one for every token of every answer it passes through, and building a tree of each (as
// a general parser does) cost it a seventh of its CPU.

// maxChunkDepth bounds how deep a chunk's values may nest (a chunk nests four levels; a deeper one is refused
// rather than followed down the stack), as fastjson bounded it.
const maxChunkDepth = 300

// chunkScanner is a position in a chunk's bytes; ok turns false at the first byte that is not JSON.
type chunkScanner struct {
	b     []byte
	i     int
	depth int
	ok    bool
	key   []byte // an escaped key, decoded
}

// scanChunk reads raw into c as ReadChunk does, reporting whether raw is one JSON object.
func scanChunk(raw []byte, c *Chunk) bool {
	s := chunkScanner{b: raw, ok: true}
	*c = Chunk{ID: c.ID, Model: c.Model, Choices: c.Choices[:0]}
	var id, model bool
	s.ws()
	if s.peek() != '{' {
		return false
	}
	s.object(func(key []byte) {
		switch string(key) {
		case "id":
			c.ID, id = s.sameString(c.ID), true
		case "model":
			c.Model, model = s.sameString(c.Model), true
		case "created":
			c.Created = s.int()
		case "choices":
			if s.peek() != '[' {
				s.skip()
				return
			}
			s.array(func() { c.Choices = append(c.Choices, s.choice()) })
		case "usage":
			if s.peek() != '{' {
				s.skip()
				return
			}
			u := &Usage{}
			s.object(func(key []byte) {
				switch string(key) {
				case "prompt_tokens":
					u.PromptTokens = int(s.int())
				case "completion_tokens":
					u.CompletionTokens = int(s.int())
				case "total_tokens":
					u.TotalTokens = int(s.int())
				default:
					s.skip()
				}
			})
			c.Usage = u
		default:
			s.skip()
		}
	})
	s.ws()
	if !s.ok || s.i != len(s.b) {
		return false
	}
	if !id {
		c.ID = ""
	}
	if !model {
		c.Model = ""
	}
	if len(c.Choices) == 0 {
		c.Choices = nil
	}
	return true
}

// choice reads one element of a chunk's choices array.
func (s *chunkScanner) choice() ChunkChoice {
	var c ChunkChoice
	if s.peek() != '{' {
		s.skip()
		return c
	}
	s.object(func(key []byte) {
		switch string(key) {
		case "index":
			c.Index = int(s.int())
		case "delta":
			if s.peek() != '{' {
				s.skip()
				return
			}
			s.object(func(key []byte) {
				switch string(key) {
				case "role":
					c.Role, _ = s.string()
				case "content":
					c.Content, c.HasContent = s.string()
				case "tool_calls":
					c.Special = true
					s.skip()
				case "refusal":
					_, isString := s.string()
					c.Special = c.Special || isString
				default:
					s.skip()
				}
			})
		case "finish_reason":
			if reason, isString := s.string(); isString {
				c.FinishReason = reason
				c.Special = c.Special || reason == "tool_calls"
			}
		default:
			s.skip()
		}
	})
	return c
}

func (s *chunkScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek is the next byte, 0 at the end.
func (s *chunkScanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// fail marks the chunk as not JSON.
func (s *chunkScanner) fail() { s.ok = false }

// object reads an object at s.i, calling member with each key (decoded) and s.i at its value, which member must
// read.
func (s *chunkScanner) object(member func(key []byte)) {
	s.items('}', func() {
		raw, escaped := s.rawString()
		if !s.ok {
			return
		}
		key := raw
		if escaped {
			s.key = appendUnescaped(s.key[:0], raw)
			key = s.key
		}
		s.ws()
		if s.peek() != ':' {
			s.fail()
			return
		}
		s.i++
		s.ws()
		member(key)
	})
}

// array reads an array at s.i, calling elem with s.i at each element, which elem must read.
func (s *chunkScanner) array(elem func()) { s.items(']', elem) }

// items reads the items of the object or array opening at s.i and closing with end, calling item with s.i at
// each, which item must read.
func (s *chunkScanner) items(end byte, item func()) {
	if s.depth++; s.depth > maxChunkDepth {
		s.fail()
		return
	}
	s.i++ // { or [
	s.ws()
	if s.peek() == end {
		s.i++
		s.depth--
		return
	}
	for s.ok {
		item()
		if !s.ok {
			return
		}
		s.ws()
		switch s.peek() {
		case ',':
			s.i++
			s.ws()
		case end:
			s.i++
			s.depth--
			return
		default:
			s.fail()
		}
	}
}

// skip steps over the value at s.i.
func (s *chunkScanner) skip() {
	switch c := s.peek(); {
	case c == '{':
		s.object(func([]byte) { s.skip() })
	case c == '[':
		s.array(s.skip)
	case c == '"':
		s.rawString()
	case c == '-' || '0' <= c && c <= '9':
		s.number()
	default:
		if !s.literal() && !s.nonFinite() {
			s.fail()
		}
	}
}

// nonFinite reads NaN or an infinity ("NaN", "Infinity", "-Infinity", "inf", any case), which JSON has no number
// for but Python's json module writes and fastjson read: an upstream served from Python may put one in a chunk's
// logprobs. It reports whether it read one.
func (s *chunkScanner) nonFinite() bool {
	i := s.i
	if i < len(s.b) && (s.b[i] == '-' || s.b[i] == '+') {
		i++
	}
	for _, word := range [...]string{"infinity", "inf", "nan"} {
		if len(s.b)-i >= len(word) && strings.EqualFold(string(s.b[i:i+len(word)]), word) {
			s.i = i + len(word)
			return true
		}
	}
	return false
}

// literal reads true, false or null, reporting whether it read one.
func (s *chunkScanner) literal() bool {
	var lit string
	switch s.peek() {
	case 't':
		lit = "true"
	case 'f':
		lit = "false"
	case 'n':
		lit = "null"
	}
	if lit == "" || len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// number reads a number, returning its bytes.
func (s *chunkScanner) number() []byte {
	start := s.i
	if s.peek() == '-' {
		s.i++
	}
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case '1' <= c && c <= '9':
		s.digits()
	default:
		if s.i = start; s.nonFinite() {
			return s.b[start:s.i]
		}
		s.fail()
		return nil
	}
	if s.peek() == '.' {
		s.i++
		if !s.digits() {
			s.fail()
			return nil
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if !s.digits() {
			s.fail()
			return nil
		}
	}
	return s.b[start:s.i]
}

// digits reads one digit or more, reporting whether there was one.
func (s *chunkScanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// int reads a value as an integer: a number written as one (no fraction, no exponent) that fits in 64 bits, else 0
// (a value of another type is read and gives 0).
func (s *chunkScanner) int() int64 {
	if c := s.peek(); c != '-' && (c < '0' || c > '9') {
		s.skip()
		return 0
	}
	b := s.number()
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' || n > (1<<63-1-int64(c-'0'))/10 {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		return -n
	}
	return n
}

// rawString reads a string at s.i, returning the bytes between its quotes and whether they hold escapes. It
// finds the closing quote and the escapes with bytes.IndexByte, a few bytes per cycle, and lets a raw control
// character through, as fastjson did.
func (s *chunkScanner) rawString() (raw []byte, escaped bool) {
	if s.peek() != '"' {
		s.fail()
		return nil, false
	}
	s.i++
	start := s.i
	for {
		end := bytes.IndexByte(s.b[s.i:], '"')
		if end < 0 {
			s.fail()
			return nil, false
		}
		esc := bytes.IndexByte(s.b[s.i:s.i+end], '\\')
		if esc < 0 {
			s.i += end + 1
			return s.b[start : s.i-1], escaped
		}
		escaped = true
		s.i += esc
		if !s.escape() {
			s.fail()
			return nil, false
		}
	}
}

// escape steps over the escape at s.i, reporting whether it is one JSON allows.
func (s *chunkScanner) escape() bool {
	if s.i+1 >= len(s.b) {
		return false
	}
	switch s.b[s.i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		s.i += 2
		return true
	case 'u':
		if s.i+6 > len(s.b) {
			return false
		}
		for _, h := range s.b[s.i+2 : s.i+6] {
			if hexValue(h) < 0 {
				return false
			}
		}
		s.i += 6
		return true
	}
	return false
}

// string reads a value as a string: the string decoded and true, or "" and false for a value of another type.
func (s *chunkScanner) string() (string, bool) {
	if s.peek() != '"' {
		s.skip()
		return "", false
	}
	raw, escaped := s.rawString()
	if !escaped {
		return string(raw), s.ok
	}
	return string(appendUnescaped(nil, raw)), s.ok
}

// sameString is string(), or known when they are equal, without a copy.
func (s *chunkScanner) sameString(known string) string {
	if s.peek() != '"' {
		s.skip()
		return ""
	}
	raw, escaped := s.rawString()
	if !escaped && string(raw) == known {
		return known
	}
	if !escaped {
		return string(raw)
	}
	return string(appendUnescaped(nil, raw))
}

// appendUnescaped appends the text of a string's raw bytes, whose escapes rawString checked, to dst. A \u escape of
// half a surrogate pair that is not followed by its other half reads as U+FFFD, as encoding/json reads it.
func appendUnescaped(dst, raw []byte) []byte {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(raw[i+1:])
			i += 4
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					r2 = hex4(raw[i+3:])
				}
				if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
					r = d
					i += 6
				} else {
					r = unicode.ReplacementChar
				}
			}
			dst = utf8.AppendRune(dst, r)
		default: // '"', '\\', '/'
			dst = append(dst, raw[i])
		}
	}
	return dst
}

// hex4 is the value of four hex digits.
func hex4(b []byte) rune {
	return rune(hexValue(b[0])<<12 | hexValue(b[1])<<8 | hexValue(b[2])<<4 | hexValue(b[3]))
}

// hexValue is the value of a hex digit, -1 for another byte.
func hexValue(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
