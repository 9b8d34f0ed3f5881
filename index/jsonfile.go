package index

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeFileSynced(path, b)
}

// writeJSONArray writes a JSON array element by element through a buffer, so a large index never needs its
// whole encoding in memory at once.
func writeJSONArray[T any](path string, items []T, record func(*T) any) error {
	return writeFileWith(path, func(w *bufio.Writer) error {
		w.WriteByte('[')
		for i := range items {
			if i > 0 {
				w.WriteByte(',')
			}
			b, err := json.Marshal(record(&items[i]))
			if err != nil {
				return err
			}
			w.Write(b)
		}
		return w.WriteByte(']')
	})
}

// readJSONArray reads a file holding one JSON array, an element at a time, so that the file's bytes are never
// held whole beside what they decode to (pages.json of a large site is hundreds of megabytes). n, the expected
// length, sizes the slice.
func readJSONArray[T any](path string, n int) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, fmt.Errorf("%s: not a JSON array: %v", filepath.Base(path), err)
	}
	out := make([]T, 0, min(max(n, 0), 1<<24)) // a damaged manifest must not reserve memory without bound
	for dec.More() {
		var v T
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: item %d: %w", filepath.Base(path), len(out), err)
		}
		out = append(out, v)
	}
	if t, err := dec.Token(); err != nil || t != json.Delim(']') {
		return nil, fmt.Errorf("%s: unterminated JSON array: %v", filepath.Base(path), err)
	}
	return out, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return nil
}
