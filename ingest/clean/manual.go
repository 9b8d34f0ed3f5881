package clean

import (
	"strings"

	"github.com/ragproxy/ragproxy/markdown"
)

// manualTitle is the title of a manual page with the purpose its NAME section gives it: "git-blame(1)" is
// "git-blame(1): Show what revision and author last modified each line of a file". A manual page's title is the
// command's name and section alone, which no question asks by; its NAME line ("git-blame - Show what …", the
// one line of a man page's NAME section, as man-pages(7) lays it out, and as the converters of AsciiDoc,
// groff and Pod keep it) says what the command is for in the words a reader asks with. Any other title is
// returned as it is.
func manualTitle(title, markdown string) string {
	name, section, ok := strings.Cut(title, "(")
	if !ok || name == "" || strings.ContainsAny(name, " \t") || !strings.HasSuffix(section, ")") || len(section) > 6 {
		return title
	}
	line, ok := nameLine(markdown)
	if !ok {
		return title
	}
	names, purpose, ok := strings.Cut(line, " - ")
	purpose = strings.TrimSpace(purpose)
	if !ok || purpose == "" || !strings.Contains(names, name) || strings.HasPrefix(purpose, "#") {
		return title
	}
	return title + ": " + purpose
}

// nameLine is the first line after the heading "NAME" (an ATX heading of any level, outside fenced code, as
// markdown.HeadingOutsideFence reads them), if the text has one.
func nameLine(text string) (string, bool) {
	inName, fenced := false, false
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if level := markdown.HeadingOutsideFence(line, &fenced); level > 0 {
			if inName {
				return "", false
			}
			inName = strings.TrimSpace(line[level:]) == "NAME"
			continue
		}
		if inName && line != "" {
			return line, !fenced && !markdown.FenceLine(line)
		}
	}
	return "", false
}
