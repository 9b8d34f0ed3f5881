package grounding

import (
	"strings"
)

// LinkFilter removes links the model invented from an answer as it streams: a markdown link whose URL was not in
// the context keeps only its text, and a bare URL that was not in the context is dropped. Text that might still
// become a link is held back until it is complete, at most maxHold bytes. Not safe for concurrent use.
type LinkFilter struct {
	allowed map[string]bool
	held    string
	// Removed counts the links taken out.
	Removed int
}

const maxHold = 1024

// NewLinkFilter returns a filter that keeps links to allowed URLs (see AllowedURLs).
func NewLinkFilter(allowed map[string]bool) *LinkFilter {
	return &LinkFilter{allowed: allowed}
}

// Write takes the next piece of the answer and returns the text that is safe to send now.
func (f *LinkFilter) Write(delta string) string {
	s := f.held + delta
	cut := f.safePrefix(s)
	f.held = s[cut:]
	return f.clean(s[:cut])
}

// Flush returns what is still held back, cleaned, at the end of the answer.
func (f *LinkFilter) Flush() string {
	s := f.held
	f.held = ""
	return f.clean(s)
}

// safePrefix is the length of s that cannot be the start of an unfinished link.
func (f *LinkFilter) safePrefix(s string) int {
	hold := len(s)
	// An open "[" without a finished "](...)" after it.
	if i := strings.LastIndexByte(s, '['); i >= 0 && !linkClosed(s[i:]) {
		hold = i
	}
	// A trailing word that is or may become a URL.
	j := strings.LastIndexAny(s, " \n\t(<") + 1
	if w := s[j:]; j < hold && (strings.HasPrefix(w, "http") || strings.HasPrefix("https://", w)) && w != "" {
		hold = j
	}
	if len(s)-hold > maxHold {
		return len(s)
	}
	return hold
}

// linkClosed reports whether s (starting at "[") is finished: a complete [text](url), or text that cannot be one.
func linkClosed(s string) bool {
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return strings.Contains(s, "\n\n")
	}
	rest := s[end+1:]
	if rest == "" {
		return false // "(" may follow
	}
	if rest[0] != '(' {
		return true
	}
	return strings.IndexByte(rest, ')') >= 0 || strings.ContainsAny(rest, " \n")
}

// clean rewrites complete text: disallowed markdown links become their text, disallowed bare URLs go.
func (f *LinkFilter) clean(s string) string {
	if !strings.Contains(s, "http") {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		i := strings.Index(s, "http")
		if i < 0 {
			b.WriteString(s)
			break
		}
		end := i
		for end < len(s) && !strings.ContainsRune(" \n\t)]>\"'<", rune(s[end])) {
			end++
		}
		u := s[i:end]
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") || f.allowed[normURL(u)] {
			b.WriteString(s[:end])
			s = s[end:]
			continue
		}
		f.Removed++
		pre := s[:i]
		if strings.HasSuffix(pre, "](") && end < len(s) && s[end] == ')' {
			// [text](bad) -> text
			open := strings.LastIndexByte(pre[:len(pre)-2], '[')
			if open >= 0 {
				b.WriteString(pre[:open])
				b.WriteString(pre[open+1 : len(pre)-2])
				s = s[end+1:]
				continue
			}
		}
		pre = strings.TrimSuffix(pre, "<")
		b.WriteString(pre)
		if end < len(s) && s[end] == '>' {
			end++
		}
		s = s[end:]
	}
	return b.String()
}
