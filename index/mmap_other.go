//go:build !unix

package index

import (
	"io"
	"os"
)

// Without mmap the file is read into memory.
func mmap(f *os.File, size int64) ([]byte, error) {
	b := make([]byte, size)
	_, err := io.ReadFull(f, b)
	return b, err
}

func munmap([]byte) {}

func dontNeed([]byte) {}
