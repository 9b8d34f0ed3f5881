package embedding

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
)

// localMagic starts a serialised Local; the byte after it is the format version.
const localMagic = "RPLE"

// localVersion is the format of an English embedder's state; localLanguagesVersion that of one with Languages,
// which follow the IDF flag as a byte count and the tags joined by commas.
const (
	localVersion          = 1
	localLanguagesVersion = 2
)

// ErrBadState is returned by UnmarshalBinary for data that is not a serialised Local.
var ErrBadState = errors.New("not a local embedder state")

// MarshalBinary encodes the configuration and IDF table (little endian; about 4 bytes per IDF bucket).
func (l *Local) MarshalBinary() ([]byte, error) {
	c := l.cfg
	b := make([]byte, 0, 5+4*6+8+1+4*len(l.idf))
	b = append(b, localMagic...)
	if len(c.Languages) > 0 {
		b = append(b, localLanguagesVersion)
	} else {
		b = append(b, localVersion)
	}
	for _, v := range []int{c.Dimension, c.MinGram, c.MaxGram, c.Hashes, c.IDFBuckets} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	b = binary.LittleEndian.AppendUint32(b, math.Float32bits(c.GramWeight))
	b = binary.LittleEndian.AppendUint64(b, l.docs)
	hasIDF := byte(0)
	if l.idf != nil {
		hasIDF = 1
	}
	b = append(b, hasIDF)
	if len(c.Languages) > 0 {
		tags := strings.Join(c.Languages, ",")
		if len(tags) > 255 {
			return nil, fmt.Errorf("embed: marshal local: %d languages", len(c.Languages))
		}
		b = append(append(b, byte(len(tags))), tags...)
	}
	if l.idf == nil {
		return b, nil
	}
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
	version := data[len(localMagic)]
	if version != localVersion && version != localLanguagesVersion {
		return fmt.Errorf("embed: unmarshal local: version %d: %w", version, ErrBadState)
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
	if version == localLanguagesVersion {
		if len(p) == 0 || len(p) < 1+int(p[0]) {
			return fmt.Errorf("embed: unmarshal local: languages cut short: %w", ErrBadState)
		}
		c.Languages = siteLanguages(strings.Split(string(p[1:1+int(p[0])]), ","))
		p = p[1+int(p[0]):]
		if len(c.Languages) == 0 {
			return fmt.Errorf("embed: unmarshal local: no languages: %w", ErrBadState)
		}
	}
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
