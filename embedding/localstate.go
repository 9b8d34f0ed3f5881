package embedding

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// localMagic starts a serialised Local; the byte after it is the format version.
const localMagic = "RPLE"

const localVersion = 1

// ErrBadState is returned by UnmarshalBinary for data that is not a serialised Local.
var ErrBadState = errors.New("not a local embedder state")

// MarshalBinary encodes the configuration and IDF table (little endian; about 4 bytes per IDF bucket).
func (l *Local) MarshalBinary() ([]byte, error) {
	c := l.cfg
	b := make([]byte, 0, 5+4*6+8+1+4*len(l.idf))
	b = append(b, localMagic...)
	b = append(b, localVersion)
	for _, v := range []int{c.Dimension, c.MinGram, c.MaxGram, c.Hashes, c.IDFBuckets} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(c.GramWeight))
	b = binary.LittleEndian.AppendUint64(b, l.docs)
	if l.idf == nil {
		return append(b, 0), nil
	}
	b = append(b, 1)
	for _, x := range l.idf {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b, nil
}

// UnmarshalBinary restores a Local written by MarshalBinary, replacing l's state.
func (l *Local) UnmarshalBinary(data []byte) error {
	const header = len(localMagic) + 1 + 4*6 + 8 + 1
	if len(data) < header || string(data[:len(localMagic)]) != localMagic {
		return fmt.Errorf("embed: unmarshal local: %w", ErrBadState)
	}
	if v := data[len(localMagic)]; v != localVersion {
		return fmt.Errorf("embed: unmarshal local: version %d: %w", v, ErrBadState)
	}
	p := data[len(localMagic)+1:]
	u32 := func() int {
		v := binary.LittleEndian.Uint32(p)
		p = p[4:]
		return int(v)
	}
	var c LocalConfig
	c.Dimension, c.MinGram, c.MaxGram, c.Hashes, c.IDFBuckets = u32(), u32(), u32(), u32(), u32()
	c.GramWeight = math.Float32frombits(uint32(u32()))
	docs := binary.LittleEndian.Uint64(p)
	hasIDF := p[8]
	p = p[9:]
	if c.Dimension <= 0 || c.Dimension > 1<<16 || c.MinGram <= 0 || c.MaxGram < c.MinGram || c.MaxGram > 64 ||
		c.IDFBuckets <= 0 || c.IDFBuckets > 1<<26 || c.Hashes <= 0 || c.Hashes > 16 || !(c.GramWeight > 0) || math.IsInf(float64(c.GramWeight), 0) {
		return fmt.Errorf("embed: unmarshal local: invalid configuration: %w", ErrBadState)
	}
	var idf []float32
	switch {
	case hasIDF == 0 && len(p) == 0:
	case hasIDF == 1 && len(p) == 4*c.IDFBuckets:
		idf = make([]float32, c.IDFBuckets)
		for i := range idf {
			idf[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
		}
	default:
		return fmt.Errorf("embed: unmarshal local: IDF table of %d bytes for %d buckets: %w", len(p), c.IDFBuckets, ErrBadState)
	}
	*l = Local{cfg: c, docs: docs, idf: idf}
	return nil
}
