package neo4jtest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Structure is a PackStream structure: a tag byte and its fields, as Bolt sends messages (HELLO is tag 0x01,
// SUCCESS 0x70) and graph values (a Node is tag 'N' with id, labels, properties and, from Bolt 5, element id).
type Structure struct {
	Tag    byte
	Fields []any
}

// maxDepth bounds the nesting Decode accepts, so that a hostile message cannot exhaust the stack.
const maxDepth = 64

// errTruncated is returned when a value's marker promises more bytes than the message holds.
var errTruncated = errors.New("packstream: truncated value")

// Encode appends the PackStream encoding of v to b. It takes what the fake sends and what the driver sends:
// nil, bool, the Go integer types (encoded as PackStream's one integer, in the fewest bytes), float64, string,
// []byte, []any, []string, []int64, map[string]any and Structure.
func Encode(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, 0xC0), nil
	case bool:
		if v {
			return append(b, 0xC3), nil
		}
		return append(b, 0xC2), nil
	case int:
		return encodeInt(b, int64(v)), nil
	case int64:
		return encodeInt(b, v), nil
	case int32:
		return encodeInt(b, int64(v)), nil
	case float64:
		b = append(b, 0xC1)
		return binary.BigEndian.AppendUint64(b, math.Float64bits(v)), nil
	case string:
		b = encodeHeader(b, len(v), 0x80, 0xD0)
		return append(b, v...), nil
	case []byte:
		switch n := len(v); {
		case n <= math.MaxUint8:
			b = append(b, 0xCC, byte(n))
		case n <= math.MaxUint16:
			b = binary.BigEndian.AppendUint16(append(b, 0xCD), uint16(n))
		default:
			b = binary.BigEndian.AppendUint32(append(b, 0xCE), uint32(n))
		}
		return append(b, v...), nil
	case []string:
		b = encodeHeader(b, len(v), 0x90, 0xD4)
		for _, s := range v {
			b, _ = Encode(b, s)
		}
		return b, nil
	case []int64:
		b = encodeHeader(b, len(v), 0x90, 0xD4)
		for _, n := range v {
			b = encodeInt(b, n)
		}
		return b, nil
	case []any:
		b = encodeHeader(b, len(v), 0x90, 0xD4)
		var err error
		for _, e := range v {
			if b, err = Encode(b, e); err != nil {
				return b, err
			}
		}
		return b, nil
	case map[string]any:
		b = encodeHeader(b, len(v), 0xA0, 0xD8)
		var err error
		for k, e := range v {
			b, _ = Encode(b, k)
			if b, err = Encode(b, e); err != nil {
				return b, err
			}
		}
		return b, nil
	case Structure:
		if len(v.Fields) > 15 {
			return b, fmt.Errorf("packstream: structure of %d fields (at most 15)", len(v.Fields))
		}
		b = append(b, 0xB0|byte(len(v.Fields)), v.Tag)
		var err error
		for _, e := range v.Fields {
			if b, err = Encode(b, e); err != nil {
				return b, err
			}
		}
		return b, nil
	}
	return b, fmt.Errorf("packstream: cannot encode %T", v)
}

// encodeHeader writes the marker of a string, list or map of n items: tiny (the size in the low nibble) up
// to 15, else the 8-, 16- or 32-bit form, whose markers follow wide.
func encodeHeader(b []byte, n int, tiny, wide byte) []byte {
	switch {
	case n < 16:
		return append(b, tiny|byte(n))
	case n <= math.MaxUint8:
		return append(b, wide, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, wide+1), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, wide+2), uint32(n))
}

func encodeInt(b []byte, n int64) []byte {
	switch {
	case n >= -16 && n <= 127:
		return append(b, byte(int8(n)))
	case n >= math.MinInt8 && n <= math.MaxInt8:
		return append(b, 0xC8, byte(int8(n)))
	case n >= math.MinInt16 && n <= math.MaxInt16:
		return binary.BigEndian.AppendUint16(append(b, 0xC9), uint16(int16(n)))
	case n >= math.MinInt32 && n <= math.MaxInt32:
		return binary.BigEndian.AppendUint32(append(b, 0xCA), uint32(int32(n)))
	}
	return binary.BigEndian.AppendUint64(append(b, 0xCB), uint64(n))
}

// Decode reads one PackStream value from the start of b and returns it with the bytes after it. Integers
// decode as int64, floats as float64, lists as []any, maps as map[string]any and structures as Structure.
// Malformed input (a truncated value, an unknown marker, a map key that is not a string, nesting deeper than
// 64) is an error, never a panic.
func Decode(b []byte) (any, []byte, error) {
	d := decoder{b: b}
	v, err := d.value(0)
	return v, d.b, err
}

type decoder struct{ b []byte }

func (d *decoder) take(n uint64) ([]byte, error) {
	if uint64(len(d.b)) < n {
		return nil, errTruncated
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out, nil
}

// size reads the length that follows a marker in 1, 2 or 4 bytes.
func (d *decoder) size(width int) (uint64, error) {
	p, err := d.take(uint64(width))
	if err != nil {
		return 0, err
	}
	switch width {
	case 1:
		return uint64(p[0]), nil
	case 2:
		return uint64(binary.BigEndian.Uint16(p)), nil
	}
	return uint64(binary.BigEndian.Uint32(p)), nil
}

func (d *decoder) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("packstream: values nested too deep")
	}
	p, err := d.take(1)
	if err != nil {
		return nil, err
	}
	m := p[0]
	switch {
	case m <= 0x7F || m >= 0xF0: // tiny int, -16..127
		return int64(int8(m)), nil
	case m&0xF0 == 0x80:
		return d.str(uint64(m & 0x0F))
	case m&0xF0 == 0x90:
		return d.list(uint64(m&0x0F), depth)
	case m&0xF0 == 0xA0:
		return d.dict(uint64(m&0x0F), depth)
	case m&0xF0 == 0xB0:
		tag, err := d.take(1)
		if err != nil {
			return nil, err
		}
		fields, err := d.list(uint64(m&0x0F), depth)
		if err != nil {
			return nil, err
		}
		return Structure{Tag: tag[0], Fields: fields}, nil
	}
	switch m {
	case 0xC0:
		return nil, nil
	case 0xC2:
		return false, nil
	case 0xC3:
		return true, nil
	case 0xC1:
		p, err := d.take(8)
		if err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.BigEndian.Uint64(p)), nil
	case 0xC8:
		p, err := d.take(1)
		if err != nil {
			return nil, err
		}
		return int64(int8(p[0])), nil
	case 0xC9:
		p, err := d.take(2)
		if err != nil {
			return nil, err
		}
		return int64(int16(binary.BigEndian.Uint16(p))), nil
	case 0xCA:
		p, err := d.take(4)
		if err != nil {
			return nil, err
		}
		return int64(int32(binary.BigEndian.Uint32(p))), nil
	case 0xCB:
		p, err := d.take(8)
		if err != nil {
			return nil, err
		}
		return int64(binary.BigEndian.Uint64(p)), nil
	case 0xCC, 0xCD, 0xCE:
		n, err := d.size(1 << (m - 0xCC))
		if err != nil {
			return nil, err
		}
		p, err := d.take(n)
		if err != nil {
			return nil, err
		}
		return append([]byte(nil), p...), nil
	case 0xD0, 0xD1, 0xD2:
		n, err := d.size(1 << (m - 0xD0))
		if err != nil {
			return nil, err
		}
		return d.str(n)
	case 0xD4, 0xD5, 0xD6:
		n, err := d.size(1 << (m - 0xD4))
		if err != nil {
			return nil, err
		}
		return d.list(n, depth)
	case 0xD8, 0xD9, 0xDA:
		n, err := d.size(1 << (m - 0xD8))
		if err != nil {
			return nil, err
		}
		return d.dict(n, depth)
	}
	return nil, fmt.Errorf("packstream: unknown marker 0x%02X", m)
}

func (d *decoder) str(n uint64) (string, error) {
	p, err := d.take(n)
	return string(p), err
}

func (d *decoder) list(n uint64, depth int) ([]any, error) {
	if n > uint64(len(d.b)) { // every item takes at least one byte: refuse before allocating
		return nil, errTruncated
	}
	out := make([]any, 0, n)
	for range n {
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (d *decoder) dict(n uint64, depth int) (map[string]any, error) {
	if n > uint64(len(d.b))/2 { // every entry takes at least two bytes
		return nil, errTruncated
	}
	out := make(map[string]any, n)
	for range n {
		k, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		key, ok := k.(string)
		if !ok {
			return nil, fmt.Errorf("packstream: map key of type %T", k)
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	return out, nil
}
