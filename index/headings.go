package index

import (
	"regexp"
	"strings"
)

// HeadingTrails returns, for each chunk of one page (texts in page order), the markdown headings in force where
// the chunk starts, outermost first, joined by " > " (e.g. "Academic Policies > Grades > Grade I (Incomplete)").
// A passage alone often lacks what it is about; its heading trail says it, for search and for the reader.
func HeadingTrails(chunks []string) []string {
	var stack [7]string // stack[level] for levels 1..6
	out := make([]string, len(chunks))
	for i, text := range chunks {
		var parts []string
		for l := 1; l <= 6; l++ {
			if stack[l] != "" {
				parts = append(parts, stack[l])
			}
		}
		out[i] = strings.Join(parts, " > ")
		inFence := false
		for _, line := range strings.Split(text, "\n") {
			t := strings.TrimSpace(line)
			if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
				inFence = !inFence
				continue
			}
			if inFence {
				continue
			}
			level := 0
			for level < len(t) && level < 7 && t[level] == '#' {
				level++
			}
			if level == 0 || level > 6 || level < len(t) && t[level] != ' ' {
				continue
			}
			stack[level] = strings.Trim(strings.TrimSpace(t[level:]), "#* ")
			for l := level + 1; l <= 6; l++ {
				stack[l] = ""
			}
		}
	}
	return out
}

// ChunkContexts returns HeadingTrails for every chunk of ix, indexed by chunk id.
func ChunkContexts(ix *Index) []string {
	out := make([]string, len(ix.Chunks))
	for _, p := range ix.Pages {
		texts := make([]string, len(p.Chunks))
		for i, c := range p.Chunks {
			texts[i] = ix.Chunks[c].Text
		}
		for i, trail := range HeadingTrails(texts) {
			out[p.Chunks[i]] = trail
		}
	}
	return out
}

// SearchTextVersion identifies how SearchText composes a chunk's text; vectors computed under another version
// are not reused.
const SearchTextVersion = 3

// SearchText is the text a chunk is searched by, dense and lexical: its page title, its heading trail and its
// text. Ingest embeds exactly this; retrieval indexes it for BM25.
//
// Link targets are left out: a passage's URLs ("http://site/search/?P=MATH%201A") are noise to both searches and
// would drown its words.
func SearchText(title, trail, text string) string {
	text = StripLinks(text)
	trail = strings.TrimPrefix(trail, title+" > ")
	if trail == "" || trail == title {
		return title + "\n" + text
	}
	return title + " > " + trail + "\n" + text
}

var (
	linkTargetRE = regexp.MustCompile(`\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+"[^"]*")?\)`)
	bareURLRE    = regexp.MustCompile(`<?https?://[^\s<>()]+>?`)
)

// StripLinks turns markdown links into their text and drops bare URLs.
func StripLinks(s string) string {
	if !strings.Contains(s, "http") && !strings.Contains(s, "](") {
		return s
	}
	s = linkTargetRE.ReplaceAllString(s, "]")
	s = bareURLRE.ReplaceAllString(s, "")
	return strings.NewReplacer("[", "", "]", "").Replace(s)
}
