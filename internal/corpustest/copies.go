package corpustest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TenFold returns a directory holding ten copies of the Berkeley corpus (see Copies), about 900 MB, made once per
// machine and kept in the temporary directory; it skips tb when the corpus is not configured. Ingest it with
// --base-url BaseURL.
func TenFold(tb testing.TB) string {
	tb.Helper()
	return Copies(tb, Dir(tb), BaseURL, 10)
}

// Copies returns a directory holding n copies of the mirror src of the site at base, each a site section of its
// own: copy k lives under c<k>/, its root-relative and absolute links to the site point into c<k>/, and every
// page opens its main content with a line naming the copy, so the copies' cleaned texts differ and ingest keeps
// them all (the scale of a site n times larger, with the same structure). Pages that are duplicates within src
// stay duplicates within each copy. The directory is made once per source, base and n and kept in the temporary
// directory, since copies of a large site take a while to write; a half-written one is never returned.
func Copies(tb testing.TB, src, base string, n int) string {
	tb.Helper()
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%d\x00v1", src, base, n)))
	out := filepath.Join(os.TempDir(), "ragproxy-copies-"+hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(filepath.Join(out, ".complete")); err == nil {
		return out
	}
	tmp, err := os.MkdirTemp(os.TempDir(), "ragproxy-copies-tmp-")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if err := writeCopies(src, base, n, tmp); err != nil {
		tb.Fatalf("copies of %s: %v", src, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		tb.Fatal(err)
	}
	os.RemoveAll(out)
	if err := os.Rename(tmp, out); err != nil {
		tb.Fatal(err)
	}
	return out
}

// siteLink finds a link attribute's value that starts at the site's root: "/..." (not "//host").
var siteLink = regexp.MustCompile(`((?:href|src|action)\s*=\s*["'])/([^/])`)

// mainOpen and bodyOpen find the tags that open a page's main content and its body.
var (
	mainOpen = regexp.MustCompile(`(?i)<main\b[^>]*>`)
	bodyOpen = regexp.MustCompile(`(?i)<body\b[^>]*>`)
)

func writeCopies(src, base string, n int, out string) error {
	host := strings.TrimSuffix(base, "/")
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		html := strings.HasSuffix(path, ".html") || strings.HasSuffix(path, ".htm")
		if !html && filepath.Ext(path) != ".pdf" {
			return nil // robots.txt, sitemaps and notes describe the original site only
		}
		for k := range n {
			prefix := fmt.Sprintf("c%d", k)
			page := body
			if html {
				page = siteLink.ReplaceAll(page, []byte("${1}/"+prefix+"/${2}"))
				page = bytes.ReplaceAll(page, []byte(host+"/"), []byte(host+"/"+prefix+"/"))
				loc := mainOpen.FindIndex(page)
				if loc == nil {
					loc = bodyOpen.FindIndex(page)
				}
				if loc != nil {
					line := fmt.Sprintf("<p>Copy %d of this page, kept for scale tests.</p>", k)
					page = append(page[:loc[1]:loc[1]], append([]byte(line), page[loc[1]:]...)...)
				}
			}
			dst := filepath.Join(out, prefix, rel)
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(dst, page, 0o644); err != nil {
				return err
			}
		}
		return nil
	})
}
