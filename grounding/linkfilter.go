package grounding

import (
	"regexp"
	"strings"
)

// LinkFilter removes the links a LinkPolicy does not allow from an answer as it streams: a markdown link keeps
// only its text, an image keeps only its alt text, and an autolink or bare URL goes. Text that might still become
// a link is held back until it is complete, at most maxHold bytes. Not safe for concurrent use.
type LinkFilter struct {
	policy *LinkPolicy
	held   string
	// Removed counts the links taken out.
	Removed int
}

const maxHold = 1024

// NewLinkFilter returns a filter that keeps the links policy allows.
func NewLinkFilter(policy *LinkPolicy) *LinkFilter {
	return &LinkFilter{policy: policy}
}

// Write takes the next piece of the answer and returns the text that is safe to send now.
func (f *LinkFilter) Write(delta string) string {
	s := f.held + delta
	cut := safePrefix(s)
	out := f.clean(s[:cut])
	// Taking a link out can leave an end that joins what follows into a new link: the "]" kept of a link whose
	// text went out earlier, before "(target)", or link text ending in "http" before "s://". That end is held
	// with the rest; it is clean text already, so cleaning it again takes out only what it forms with new text.
	keep := safePrefix(out)
	f.held = out[keep:] + s[cut:]
	return out[:keep]
}

// Flush returns what is still held back, cleaned, at the end of the answer.
func (f *LinkFilter) Flush() string {
	s := f.held
	f.held = ""
	return f.clean(s)
}

// safePrefix is the length of s that cannot be the start of an unfinished link.
func safePrefix(s string) int {
	hold := len(s)
	// The first open "[" (a link, or with "!" an image) without a finished "](...)" after it: text sent before it
	// cannot join what follows into a link. Only the last maxHold bytes can still be held.
	for i := max(0, len(s)-maxHold); i < len(s); i++ {
		j := strings.IndexByte(s[i:], '[')
		if j < 0 {
			break
		}
		i += j
		if !linkClosed(s[i:]) {
			hold = i
			if i > 0 && s[i-1] == '!' {
				hold = i - 1
			}
			break
		}
	}
	// The first "](" of a link whose text went out before, its target not finished ("](](x)" is one target to
	// come, not a finished one after a stray "]("), or a final "]" that "(" may follow.
	for i := max(0, len(s)-maxHold); i < hold; i++ {
		j := strings.Index(s[i:hold], "](")
		if j < 0 {
			break
		}
		if i += j; !targetClosed(s[i+1:]) {
			hold = i
			break
		}
	}
	if strings.HasSuffix(s, "]") && len(s)-1 < hold {
		hold = len(s) - 1
	}
	// An open "<" that may become an autolink.
	if i := strings.LastIndexByte(s, '<'); i >= 0 && i < hold && !strings.ContainsAny(s[i:], "> \n") {
		hold = i
	}
	// A bare URL at the end, finished or not: from its first possible start (at a word boundary, as linkPattern
	// reads one) after the last character that ends a URL.
	for p := strings.LastIndexAny(s, " \n\t<>\"'()[]") + 1; p < hold; p++ {
		if (p == 0 || !isWordByte(s[p-1])) && mayBecomeURL(strings.ToLower(s[p:min(len(s), p+8)])) {
			hold = p
			break
		}
	}
	if len(s)-hold > maxHold {
		return len(s)
	}
	return hold
}

// isWordByte reports an ASCII word character, as regexp's \b sees them.
func isWordByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// mayBecomeURL reports whether a word (lowercase) starts a bare URL, or may once more text comes.
func mayBecomeURL(w string) bool {
	for _, start := range []string{"https://", "http://", "www."} {
		if strings.HasPrefix(w, start) || strings.HasPrefix(start, w) {
			return true
		}
	}
	return false
}

// linkClosed reports whether s (starting at "[") is finished: a complete [text](target), its parentheses
// balanced as markdown reads them, or text that cannot be one. Only the first maxHold bytes are read: a link
// still open after them is not held any longer.
func linkClosed(s string) bool {
	if len(s) > maxHold {
		s = s[:maxHold]
	}
	// The "]" that closes this "[": link text may hold balanced brackets, and a link inside one can leave an
	// outer link when it is taken out ("[[a](b)](c)").
	end, depth := -1, 0
	for i := 0; i < len(s) && end < 0; i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			if depth--; depth == 0 {
				end = i
			}
		}
	}
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
	return targetClosed(rest)
}

// targetClosed reports whether s, starting at a link's "(", holds the whole target. A title may follow the target
// after a space ([text](url "title")), so only the closing parenthesis, or a paragraph break, ends it.
func targetClosed(s string) bool {
	depth := 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return true
			}
		case '\n':
			if strings.HasPrefix(s[i+1:], "\n") {
				return true
			}
		}
	}
	return false
}

// linkPattern finds, left to right, what renders as a link: a markdown link or image (group 1 "!" for an
// image, group 2 its text, group 3 its target), an autolink (group 4), a bare URL as GFM autolinks them
// (group 5: http(s) in any case, or www.), or the "](target)" end of a link whose text went out earlier, after
// more than maxHold bytes (group 6).
var linkPattern = regexp.MustCompile(`(!?)\[([^\[\]\n]*)\]\(\s*<?((?:[^()\s<>]|\([^()\s<>]*\))*)>?(?:\s+(?:"[^"\n]*"|'[^'\n]*'|\([^()\n]*\)))?\s*\)` +
	`|<([A-Za-z][A-Za-z0-9+.\-]{1,31}:[^<>\s]*)>` +
	`|(\b(?i:https?://|www\.)[^\s<>"'\])]+)` +
	`|\]\(\s*<?((?:[^()\s<>]|\([^()\s<>]*\))*)>?(?:\s+(?:"[^"\n]*"|'[^'\n]*'|\([^()\n]*\)))?\s*\)`)

// clean rewrites complete text, taking out every link the policy does not allow. Taking one out can make another
// ("[[a](b)](c)" leaves "[a](c)"), so it repeats until nothing more goes; each round removes text, and after
// maxCleanRounds whatever could still nest is dropped as text.
func (f *LinkFilter) clean(s string) string {
	for range maxCleanRounds {
		out, removed := f.cleanOnce(s)
		if !removed {
			return out
		}
		s = out
	}
	return strings.NewReplacer("[", "", "]", "", "<", "", ">", "").Replace(s)
}

const maxCleanRounds = 16

// cleanOnce takes out the links of s the policy does not allow, reporting whether it took any.
func (f *LinkFilter) cleanOnce(s string) (string, bool) {
	if !strings.ContainsAny(s, "[]<:.") {
		return s, false
	}
	var b strings.Builder
	last := 0
	for _, m := range linkPattern.FindAllStringSubmatchIndex(s, -1) {
		group := func(i int) string {
			if m[2*i] < 0 {
				return ""
			}
			return s[m[2*i]:m[2*i+1]]
		}
		var target, keep string
		switch {
		case m[4] >= 0: // a markdown link or image: its text (an image's alt text) stays
			target, keep = group(3), group(2)
		case m[8] >= 0:
			target = group(4)
		case m[12] >= 0:
			target, keep = group(6), "]"
		default:
			target = group(5)
			// Trailing punctuation ends a sentence, not the URL (as GFM reads it): it stays.
			trimmed := strings.TrimRight(target, ".,;:!?*_~")
			keep, target = target[len(trimmed):], trimmed
		}
		if f.policy.Allows(target) {
			continue
		}
		f.Removed++
		b.WriteString(s[last:m[0]])
		b.WriteString(keep)
		last = m[1]
	}
	if last == 0 {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}
