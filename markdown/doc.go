// Package markdown reads the markdown ragproxy keeps of each page: its ATX headings and heading trails outside
// fenced code, and its links (stripped to their text, compacted, or listed). It has no state and is safe for
// concurrent use.
package markdown
