package lexical

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ragproxy/ragproxy/internal/corpustest"
)

// syntheticCorpus returns n reproducible documents over a Zipf-distributed vocabulary of made-up words, numbers
// and codes, and queries over the same vocabulary (some of them with words the corpus lacks).
func syntheticCorpus(n, queries int) (docs, qs []string) {
	r := rand.New(rand.NewPCG(1, 2))
	syllables := []string{"ka", "lo", "mi", "nu", "re", "sa", "ti", "vo", "ber", "kel", "ing", "tion", "ed", "s"}
	vocab := make([]string, 4000)
	for i := range vocab {
		var w strings.Builder
		for range 1 + r.IntN(4) {
			w.WriteString(syllables[r.IntN(len(syllables))])
		}
		switch i % 50 {
		case 7:
			fmt.Fprintf(&w, " %d.%02d", r.IntN(5), r.IntN(100))
		case 13:
			fmt.Fprintf(&w, " $%d,%03d", 1+r.IntN(30), r.IntN(1000))
		case 29:
			w.WriteString(" the of and")
		}
		vocab[i] = w.String()
	}
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	text := func(words int) string {
		var b strings.Builder
		for i := range words {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(vocab[zipf.Uint64()])
		}
		return b.String()
	}
	for i := range n {
		if i%101 == 0 {
			docs = append(docs, "") // documents without terms
			continue
		}
		docs = append(docs, text(10+r.IntN(300)))
	}
	for i := range queries {
		q := text(1 + r.IntN(12))
		if i%10 == 0 {
			q += " zzunknown"
		}
		qs = append(qs, q)
	}
	return docs, qs
}

var testConfigs = []Config{{}, {K1: 2, B: 0.3}, {B: -1}, {Analyzer: Analyzer{NoStem: true, KeepStopwords: true}}}

// roundTrip encodes b and reads it back, from a buffer that starts at a multiple of 4 (read in place) and from
// one that does not (copied), and checks that both encode to the same bytes again.
func roundTrip(t testing.TB, b *BM25) []*BM25 {
	t.Helper()
	enc, err := b.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := b.MarshalBinary()
	if err != nil || string(m) != string(enc) {
		t.Fatalf("MarshalBinary differs from AppendBinary(nil) (err %v)", err)
	}
	prefixed, err := b.AppendBinary([]byte("prefix"))
	if err != nil || string(prefixed) != "prefix"+string(enc) {
		t.Fatalf("AppendBinary with a prefix: not the prefix followed by the encoding (err %v)", err)
	}
	buf := make([]byte, len(enc)+1)
	copy(buf[1:], enc)
	var out []*BM25
	for _, data := range [][]byte{enc, buf[1:]} {
		got, err := ReadBM25(data)
		if err != nil {
			t.Fatalf("ReadBM25: %v", err)
		}
		again, err := got.AppendBinary(nil)
		if err != nil || string(again) != string(enc) {
			t.Fatalf("a read index encodes differently (err %v)", err)
		}
		out = append(out, got)
	}
	return out
}

// sameSearches checks that got answers every query exactly as want does: the same hits with the same scores
// (to the bit), with and without a filter, and the same sparse vectors.
func sameSearches(t *testing.T, want, got *BM25, queries, docs []string) {
	t.Helper()
	if got.Len() != want.Len() || got.Terms() != want.Terms() {
		t.Fatalf("read index has %d documents, %d terms; want %d, %d", got.Len(), got.Terms(), want.Len(), want.Terms())
	}
	odd := func(d int) bool { return d%2 == 1 }
	failures := 0
	for _, q := range queries {
		for _, k := range []int{3, 100} {
			for _, filter := range []func(int) bool{nil, odd} {
				w, g := want.Search(q, k, filter), got.Search(q, k, filter)
				if !slices.Equal(w, g) {
					t.Errorf("Search(%.60q, %d, filter %v) (-built +read):\n%s", q, k, filter != nil,
						cmp.Diff(w, g, cmpopts.EquateEmpty()))
					failures++
				}
			}
		}
		wi, wv := want.SparseQuery(q)
		gi, gv := got.SparseQuery(q)
		if !slices.Equal(wi, gi) || !slices.Equal(wv, gv) {
			t.Errorf("SparseQuery(%.60q) (-built +read):\n%s", q, cmp.Diff([]any{wi, wv}, []any{gi, gv}))
			failures++
		}
		if failures > 10 {
			t.Fatal("too many differences")
		}
	}
	for i := 0; i < len(docs); i += 1 + len(docs)/50 {
		wi, wv := want.DocSparse(docs[i])
		gi, gv := got.DocSparse(docs[i])
		if !slices.Equal(wi, gi) || !slices.Equal(wv, gv) {
			t.Errorf("DocSparse(doc %d) (-built +read):\n%s", i, cmp.Diff([]any{wi, wv}, []any{gi, gv}))
		}
	}
}

func TestBinaryRoundTrip(t *testing.T) {
	synth, synthQueries := syntheticCorpus(3000, 100)
	small := []string{"bioengineering units", "major", "fees tuition", "fee fee", "3.70 GPA", "510-642-1483",
		"L&S", "$13,510", "the of and", "unknownword", "majors requiring units", ""}
	for _, tc := range []struct {
		name    string
		docs    []string
		queries []string
	}{
		{"small", docs, small},
		{"synthetic", synth, synthQueries},
		{"no documents", nil, small},
		{"empty documents", []string{"", "the of", ""}, small},
	} {
		for _, cfg := range testConfigs {
			t.Run(fmt.Sprintf("%s/%+v", tc.name, cfg), func(t *testing.T) {
				built := NewBM25(tc.docs, cfg)
				for _, read := range roundTrip(t, built) {
					sameSearches(t, built, read, tc.queries, tc.docs)
				}
			})
		}
	}
}

// TestCorpusBinaryRoundTrip checks a read index of the Berkeley chunks against the built one on the dev
// questions and on the openings of documents.
func TestCorpusBinaryRoundTrip(t *testing.T) {
	pages := corpustest.Pages(t)
	var docs []string
	for _, c := range corpustest.Chunks(pages, 2600) {
		docs = append(docs, c.Text)
	}
	var queries []string
	for _, q := range corpustest.Questions(t) {
		queries = append(queries, q.Question)
	}
	for i := 0; i < len(docs); i += 61 {
		queries = append(queries, docs[i][:min(len(docs[i]), 300)])
	}
	built := NewBM25(docs, Config{})
	for _, read := range roundTrip(t, built) {
		sameSearches(t, built, read, queries, docs)
	}
}

// withChecksum returns data with its trailing checksum recomputed, so that a change reaches the structural
// checks.
func withChecksum(data []byte) []byte {
	out := append([]byte(nil), data...)
	if len(out) >= 4 {
		binary.LittleEndian.PutUint32(out[len(out)-4:], crc32.Checksum(out[:len(out)-4], castagnoli))
	}
	return out
}

func TestReadBM25Errors(t *testing.T) {
	enc, err := NewBM25(docs, Config{}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("truncated", func(t *testing.T) {
		for n := range len(enc) {
			if _, err := ReadBM25(enc[:n]); !errors.Is(err, ErrInvalidIndex) {
				t.Fatalf("ReadBM25 of the first %d of %d bytes: error %v, want ErrInvalidIndex", n, len(enc), err)
			}
		}
	})
	t.Run("trailing bytes", func(t *testing.T) {
		if _, err := ReadBM25(append(enc[:len(enc):len(enc)], 0)); !errors.Is(err, ErrInvalidIndex) {
			t.Errorf("error %v, want ErrInvalidIndex", err)
		}
	})
	t.Run("bit flips", func(t *testing.T) {
		for i := range 8 * len(enc) {
			data := append([]byte(nil), enc...)
			data[i/8] ^= 1 << (i % 8)
			if _, err := ReadBM25(data); !errors.Is(err, ErrInvalidIndex) && !errors.Is(err, ErrIndexVersion) {
				t.Fatalf("bit %d flipped: error %v, want ErrInvalidIndex or ErrIndexVersion", i, err)
			}
		}
	})
	t.Run("version", func(t *testing.T) {
		data := append([]byte(nil), enc...)
		binary.LittleEndian.PutUint16(data[6:], binaryVersion+1)
		_, err := ReadBM25(withChecksum(data))
		if !errors.Is(err, ErrIndexVersion) || !strings.Contains(err.Error(), fmt.Sprint(binaryVersion+1)) {
			t.Errorf("error %v, want ErrIndexVersion naming version %d", err, binaryVersion+1)
		}
	})
	t.Run("not an index", func(t *testing.T) {
		for _, data := range [][]byte{nil, []byte("RPBM2"), []byte(`{"json": true}`), make([]byte, 1000)} {
			if _, err := ReadBM25(data); !errors.Is(err, ErrInvalidIndex) {
				t.Errorf("ReadBM25(%.20q): error %v, want ErrInvalidIndex", data, err)
			}
		}
	})
	// Changes that keep the length and the checksum right must still be caught.
	b := NewBM25(docs, Config{})
	t.Run("structure", func(t *testing.T) {
		le := binary.LittleEndian
		termsAt := headerSize + 4*len(b.idf) + 4*(len(b.idf)+1) // the term text offsets
		docsAt := termsAt + 4*(len(b.idf)+1)
		impactAt := docsAt + 4*len(b.docs)
		textAt := impactAt + 4*len(b.docs)
		for _, tc := range []struct {
			name   string
			change func(d []byte)
		}{
			{"unknown flag", func(d []byte) { d[8] |= 4 }},
			{"reserved field", func(d []byte) { d[52] = 1 }},
			{"k1 zero", func(d []byte) { le.PutUint64(d[16:], 0) }},
			{"b above 1", func(d []byte) { le.PutUint64(d[24:], 0x4000000000000000) }},
			{"too few documents", func(d []byte) { le.PutUint32(d[12:], 3) }},
			{"document out of order", func(d []byte) {
				// the first term with two postings gets them swapped
				for i := range b.idf {
					if b.offs[i+1]-b.offs[i] >= 2 {
						at := docsAt + 4*int(b.offs[i])
						x, y := le.Uint32(d[at:]), le.Uint32(d[at+4:])
						le.PutUint32(d[at:], y)
						le.PutUint32(d[at+4:], x)
						return
					}
				}
				panic("no term with two postings")
			}},
			{"negative document", func(d []byte) { le.PutUint32(d[docsAt:], 0xffffffff) }},
			{"zero impact", func(d []byte) { le.PutUint32(d[impactAt:], 0) }},
			{"terms out of order", func(d []byte) { d[textAt], d[textAt+1] = 0xff, 0xff }},
			{"empty term", func(d []byte) { le.PutUint32(d[termsAt+4:], 0) }},
			{"posting offsets past the end", func(d []byte) { le.PutUint32(d[headerSize+4*len(b.idf)+4:], 1<<30) }},
		} {
			data := append([]byte(nil), enc...)
			tc.change(data)
			if _, err := ReadBM25(withChecksum(data)); !errors.Is(err, ErrInvalidIndex) {
				t.Errorf("%s: error %v, want ErrInvalidIndex", tc.name, err)
			} else {
				t.Logf("%s: %v", tc.name, err)
			}
		}
	})
}

func FuzzReadBM25(f *testing.F) {
	for _, d := range [][]string{docs, {"alpha beta", "beta gamma gamma"}, {""}, nil} {
		for _, cfg := range testConfigs[:2] {
			enc, err := NewBM25(d, cfg).MarshalBinary()
			if err != nil {
				f.Fatal(err)
			}
			f.Add(enc)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// With the checksum recomputed, changes reach the structural checks.
		for _, in := range [][]byte{data, withChecksum(data)} {
			b, err := ReadBM25(in)
			if err != nil {
				if !errors.Is(err, ErrInvalidIndex) && !errors.Is(err, ErrIndexVersion) {
					t.Fatalf("error %v wraps neither ErrInvalidIndex nor ErrIndexVersion", err)
				}
				continue
			}
			enc, err := b.AppendBinary(nil)
			if err != nil || string(enc) != string(in) {
				t.Fatalf("a read index encodes differently (err %v)", err)
			}
			if b.Len() > 1<<20 {
				continue // searching would allocate a score per document
			}
			for i := range min(b.Terms(), 20) {
				term := b.termText[b.termOffs[i]:b.termOffs[i+1]]
				if got, ok := b.termIndex(term); !ok || int(got) != i {
					t.Fatalf("term %d %q found at %d, %v", i, term, got, ok)
				}
				for _, h := range b.Search(term+" "+docs[i%len(docs)], 5, nil) {
					if h.Doc < 0 || h.Doc >= b.Len() {
						t.Fatalf("hit %+v outside %d documents", h, b.Len())
					}
				}
			}
		}
	})
}

// TestWriteTo checks that streaming the binary form writes exactly what AppendBinary builds.
func TestWriteTo(t *testing.T) {
	docs, _ := syntheticCorpus(3000, 0)
	for _, b := range []*BM25{NewBM25(docs, Config{}), NewBM25(nil, Config{})} {
		want, err := b.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		checkWriteTo(t, b, want)
	}
}

// checkWriteTo checks that w writes want, the BM25 binary form, and that its BinarySize announces its length.
func checkWriteTo(t *testing.T, w interface {
	io.WriterTo
	BinarySize() int
}, want []byte) {
	t.Helper()
	var got bytes.Buffer
	n, err := w.WriteTo(&got)
	if err != nil || n != int64(len(want)) || w.BinarySize() != len(want) {
		t.Fatalf("WriteTo = %d, %v; BinarySize %d; want %d bytes", n, err, w.BinarySize(), len(want))
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("%T.WriteTo differs from the BM25's binary form", w)
	}
}

// TestPostingsWriteTo checks that the binary form written straight from the postings is the laid-out index's,
// byte for byte, in every configuration, and that BinarySize announces its length.
func TestPostingsWriteTo(t *testing.T) {
	synth, _ := syntheticCorpus(3000, 0)
	for name, docs := range map[string][]string{"synthetic": synth, "small": docs, "none": nil,
		"empty": {"", "the of", ""}} {
		for _, cfg := range testConfigs {
			t.Run(fmt.Sprintf("%s/%+v", name, cfg), func(t *testing.T) {
				doc := func(i int) string { return docs[i] }
				want, err := NewBM25Func(len(docs), doc, cfg).AppendBinary(nil)
				if err != nil {
					t.Fatal(err)
				}
				checkWriteTo(t, IndexFunc(len(docs), doc, cfg), want)
			})
		}
	}
}
