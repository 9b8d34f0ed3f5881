package eval_test

import (
	"io/fs"
	"testing"

	"github.com/ragproxy/ragproxy/examples"
)

func mustSub(t *testing.T) fs.FS {
	t.Helper()
	sub, err := fs.Sub(examples.Site, "site")
	if err != nil {
		t.Fatal(err)
	}
	return sub
}
