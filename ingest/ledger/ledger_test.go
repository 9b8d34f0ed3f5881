package ledger

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestLedgerSurvivesATornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	a, b := KeyOf("summary", "gpt-4o-mini", "page one"), KeyOf("vector", "text-embedding-3-small", "page one")
	if err := l.Append(Record{a, []byte("one")}, Record{b, []byte("vector bytes")}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	// A crash mid-append leaves half a record after the whole ones.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.Write([]byte{40, 0, 0, 0, 1, 2, 3, 4, 5})
	f.Close()
	size, _ := os.Stat(path)

	l, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Dropped() != 9 || l.Len() != 2 {
		t.Fatalf("Dropped %d, Len %d; want 9, 2 (file was %d bytes)", l.Dropped(), l.Len(), size.Size())
	}
	for k, want := range map[Key]string{a: "one", b: "vector bytes"} {
		got, ok, err := l.Get(k)
		if err != nil || !ok || string(got) != want {
			t.Errorf("Get = %q, %v, %v; want %q", got, ok, err, want)
		}
	}
	// Appends after the cut are read back by the next Open.
	c := KeyOf("summary", "gpt-4o-mini", "page two")
	if err := l.Append(Record{c, []byte("two")}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got, ok, _ := l.Get(c); !ok || string(got) != "two" || l.Dropped() != 0 {
		t.Errorf("after reopening: Get = %q, %v, Dropped %d", got, ok, l.Dropped())
	}
}

func TestLedgerCorruptRecordEndsTheLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	l, _ := Open(path)
	a, b := KeyOf("a"), KeyOf("b")
	l.Append(Record{a, []byte("first")})
	l.Append(Record{b, []byte("second")})
	l.Close()
	raw, _ := os.ReadFile(path)
	i := bytes.LastIndex(raw, []byte("second"))
	raw[i] ^= 0xff // a flipped bit in the last record
	os.WriteFile(path, raw, 0o644)
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, ok, _ := l.Get(b); ok {
		t.Error("a record whose checksum fails was read")
	}
	if got, ok, _ := l.Get(a); !ok || string(got) != "first" {
		t.Errorf("Get(a) = %q, %v", got, ok)
	}
}

func TestLedgerCompactKeepsWhatWasUsed(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	l, _ := Open(path)
	var keys []Key
	for i := range 10 {
		k := KeyOf("page", string(rune('a'+i)))
		keys = append(keys, k)
		l.Append(Record{k, bytes.Repeat([]byte{byte(i)}, 100)})
	}
	l.Close()
	l, _ = Open(path)
	l.Get(keys[3]) // the next run used one record
	if err := l.Compact(); err != nil {
		t.Fatal(err)
	}
	if l.Len() != 1 {
		t.Fatalf("Len after Compact = %d, want 1", l.Len())
	}
	l.Close()
	l, _ = Open(path)
	defer l.Close()
	got, ok, _ := l.Get(keys[3])
	if !ok || !bytes.Equal(got, bytes.Repeat([]byte{3}, 100)) || l.Len() != 1 {
		t.Errorf("after compaction: Get = %v, %v; Len %d", got, ok, l.Len())
	}
}
