// Package ledger keeps what ingest paid a model for (page summaries, embedding vectors) in a file next to the
// index, as each result arrives, so that a run that fails (a spent quota, a rate limit, a crash) loses nothing it
// paid for and the next run, or the next nightly ingest, asks only for what is missing.
//
// The store is an append-only log, not an embedded database. Its records are written once and never updated, read
// back by key once per run, and the only consistency it needs is that a record read is a record written whole: a
// length, a CRC-32C of the payload and the payload, appended and fsynced per batch, does that, and a torn tail (a
// crash mid-write) is recognised by its length or checksum and cut off on open. An embedded database would add a
// dependency, its own file format and locking, for none of which this use has a need. The log keeps only the
// offsets of its records in memory, so that a large site's vectors stay on disk; Compact drops what a successful
// run no longer used.
//
// A Ledger is safe for concurrent use by one process; two processes must not open the same file at once (ingest
// serialises runs per index directory).
package ledger

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// FileName is the ledger's file in an index directory.
const FileName = "ledger.log"

// Key identifies a record by everything that determines its value (see KeyOf).
type Key [sha256.Size]byte

// KeyOf hashes parts, each length-prefixed so that no two lists of parts share a key.
func KeyOf(parts ...string) Key {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.LittleEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	var k Key
	h.Sum(k[:0])
	return k
}

// Record is one value under its key.
type Record struct {
	Key   Key
	Value []byte
}

// header is a record's length (of key and value) and the CRC-32C of both.
const headerSize = 8

// maxRecord bounds a record's length on read: a length past it is a torn or foreign tail, not a record (a
// vector of 3072 float32 is 12 KB, a summary a few hundred bytes).
const maxRecord = 16 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Ledger is an open ledger file.
type Ledger struct {
	path string

	mu   sync.Mutex
	f    *os.File
	at   map[Key]span
	size int64
	used map[Key]bool
	// dropped is the length of the torn tail cut off on open.
	dropped int64
}

// span is where a record's value is in the file.
type span struct {
	off int64
	n   int32
}

// Open opens the ledger at path, creating it when missing, and reads its records' keys. A torn or corrupt tail
// is cut off (Dropped says how much).
func Open(path string) (*Ledger, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	l := &Ledger{path: path, f: f, at: map[Key]span{}, used: map[Key]bool{}}
	if err := l.scan(); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// scan reads every whole record and truncates the file after the last.
func (l *Ledger) scan() error {
	st, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("ledger: %w", err)
	}
	r := bufio.NewReaderSize(io.NewSectionReader(l.f, 0, st.Size()), 1<<20)
	var off int64
	var hdr [headerSize]byte
	var buf []byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			break
		}
		n := binary.LittleEndian.Uint32(hdr[:4])
		if n < uint32(len(Key{})) || n > maxRecord {
			break
		}
		if cap(buf) < int(n) {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			break
		}
		if crc32.Checksum(buf, castagnoli) != binary.LittleEndian.Uint32(hdr[4:]) {
			break
		}
		var k Key
		copy(k[:], buf)
		l.at[k] = span{off: off + headerSize + int64(len(k)), n: int32(int(n) - len(k))}
		off += headerSize + int64(n)
	}
	if off < st.Size() {
		l.dropped = st.Size() - off
		if err := l.f.Truncate(off); err != nil {
			return fmt.Errorf("ledger: cut torn tail: %w", err)
		}
	}
	l.size = off
	return nil
}

// Dropped returns the bytes of torn tail Open cut off.
func (l *Ledger) Dropped() int64 { return l.dropped }

// Len returns the number of records.
func (l *Ledger) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.at)
}

// Get returns the value under k, and marks it used (see Compact).
func (l *Ledger) Get(k Key) ([]byte, bool, error) {
	l.mu.Lock()
	s, ok := l.at[k]
	if ok {
		l.used[k] = true
	}
	l.mu.Unlock()
	if !ok {
		return nil, false, nil
	}
	b := make([]byte, s.n)
	if _, err := l.f.ReadAt(b, s.off); err != nil {
		return nil, false, fmt.Errorf("ledger: read: %w", err)
	}
	return b, true, nil
}

// Append writes recs and fsyncs them: once it returns, they survive a crash. The records count as used.
func (l *Ledger) Append(recs ...Record) error {
	if len(recs) == 0 {
		return nil
	}
	var buf []byte
	for _, r := range recs {
		n := len(r.Key) + len(r.Value)
		if n > maxRecord {
			return fmt.Errorf("ledger: record of %d bytes is too large", n)
		}
		var hdr [headerSize]byte
		binary.LittleEndian.PutUint32(hdr[:4], uint32(n))
		c := crc32.Update(crc32.Checksum(r.Key[:], castagnoli), castagnoli, r.Value)
		binary.LittleEndian.PutUint32(hdr[4:], c)
		buf = append(buf, hdr[:]...)
		buf = append(buf, r.Key[:]...)
		buf = append(buf, r.Value...)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return errors.New("ledger: closed")
	}
	if _, err := l.f.WriteAt(buf, l.size); err != nil {
		// A partial write is a torn tail: the next Open cuts it off, and this process writes over it.
		return fmt.Errorf("ledger: append: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("ledger: sync: %w", err)
	}
	off := l.size
	for _, r := range recs {
		l.at[r.Key] = span{off: off + headerSize + int64(len(r.Key)), n: int32(len(r.Value))}
		l.used[r.Key] = true
		off += headerSize + int64(len(r.Key)+len(r.Value))
	}
	l.size = off
	return nil
}

// Compact rewrites the ledger with only the records read or written since Open, when the others are more than
// half of it: call it after a run that succeeded, whose results are all that the next run can reuse. The new
// file replaces the old one by rename, so a crash leaves one or the other whole.
func (l *Ledger) Compact() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var keep int64
	for k := range l.used {
		keep += headerSize + int64(len(k)) + int64(l.at[k].n)
	}
	if keep*2 >= l.size {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(l.path), ".ledger-")
	if err != nil {
		return fmt.Errorf("ledger: compact: %w", err)
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriterSize(tmp, 1<<20)
	at := make(map[Key]span, len(l.used))
	var off int64
	for k := range l.used {
		s := l.at[k]
		v := make([]byte, s.n)
		if _, err := l.f.ReadAt(v, s.off); err != nil {
			tmp.Close()
			return fmt.Errorf("ledger: compact: %w", err)
		}
		var hdr [headerSize]byte
		binary.LittleEndian.PutUint32(hdr[:4], uint32(len(k)+len(v)))
		binary.LittleEndian.PutUint32(hdr[4:], crc32.Update(crc32.Checksum(k[:], castagnoli), castagnoli, v))
		w.Write(hdr[:])
		w.Write(k[:])
		w.Write(v)
		at[k] = span{off: off + headerSize + int64(len(k)), n: s.n}
		off += headerSize + int64(len(k)) + int64(s.n)
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		return fmt.Errorf("ledger: compact: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("ledger: compact: %w", err)
	}
	if err := os.Rename(tmp.Name(), l.path); err != nil {
		tmp.Close()
		return fmt.Errorf("ledger: compact: %w", err)
	}
	l.f.Close()
	l.f, l.at, l.size = tmp, at, off
	return nil
}

// Close closes the file.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
