package clean

import "testing"

func TestManualTitle(t *testing.T) {
	const page = "# ls(1)\n\n## NAME\n\nls, dir - list directory contents\n\n## SYNOPSIS\n\nls [OPTION]...\n"
	tests := []struct {
		title, markdown, want string
	}{
		{"ls(1)", page, "ls(1): list directory contents"},
		{"dir(1)", page, "dir(1): list directory contents"},
		{"ls(1)", "# NAME\n\nls - list directory contents\n", "ls(1): list directory contents"},
		// Not a manual page's title, or no NAME line naming it: the title stays.
		{"Directory listings", page, "Directory listings"},
		{"Chemistry (CHEM)", page, "Chemistry (CHEM)"},
		{"cp(1)", page, "cp(1)"},
		{"ls(1)", "# ls(1)\n\n## Name\n\nls - list directory contents\n", "ls(1)"},
		{"ls(1)", "# ls(1)\n\n## NAME\n\n## SYNOPSIS\n", "ls(1)"},
		// A "#" line in code is no heading.
		{"ls(1)", "```\n# NAME\nls - list directory contents\n```\n", "ls(1)"},
	}
	for _, tt := range tests {
		if got := manualTitle(tt.title, tt.markdown); got != tt.want {
			t.Errorf("manualTitle(%q) = %q, want %q", tt.title, got, tt.want)
		}
	}
}
