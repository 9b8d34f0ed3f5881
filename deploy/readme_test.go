package deploy

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// readmeTable returns the rows of the first table under the README heading, as cells.
func readmeTable(t *testing.T, readme, heading string) [][]string {
	t.Helper()
	_, section, ok := strings.Cut(readme, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README has no %q section", heading)
	}
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	var rows [][]string
	inTable := false
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if strings.HasPrefix(cells[0], "---") {
			continue
		}
		rows = append(rows, cells)
	}
	if len(rows) < 2 {
		t.Fatalf("README %q: no table", heading)
	}
	return rows[1:] // without the header
}

var (
	codeSpan = regexp.MustCompile("`([^`]+)`")
	envName  = regexp.MustCompile(`^[A-Z][A-Z0-9_]+$`)
	flagName = regexp.MustCompile(`^--([a-z0-9-]+)`)
)

// spans returns the code spans of a cell that match re, by their first submatch or whole.
func spans(cell string, re *regexp.Regexp) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(cell, -1) {
		if s := re.FindStringSubmatch(m[1]); s != nil {
			out = append(out, s[len(s)-1])
		}
	}
	return out
}

// TestReadmeConfiguration holds the README's configuration tables to the binary: every variable they name is
// read, every variable the binary reads is named (Configuration, or Scale-out backends for the stores' settings),
// and a row's flags and variables are the pairs the flags fall back to.
func TestReadmeConfiguration(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	be := readBinaryEnv(t)
	documented := map[string]bool{}
	for _, row := range readmeTable(t, readme, "## Configuration") {
		if len(row) < 2 {
			t.Errorf("Configuration row %q has no environment column", row)
			continue
		}
		flags, envs := spans(row[0], flagName), spans(row[1], envName)
		for _, e := range envs {
			documented[e] = true
		}
		if len(flags) == len(envs) {
			for i, e := range envs {
				if !be.flags[e][flags[i]] {
					t.Errorf("Configuration: --%s falls back to %s, the README says; the flag reads %v", flags[i], e, keys(be.flagsOf(flags[i])))
				}
			}
		} else if len(flags) > 0 && len(envs) > 0 {
			t.Errorf("Configuration row %q: %d flags and %d variables; write one pair per flag", row[0], len(flags), len(envs))
		}
	}
	for _, row := range readmeTable(t, readme, "## Scale-out backends") {
		for _, e := range spans(row[0], envName) {
			documented[e] = true
		}
	}
	for e := range documented {
		if !be.vars[e] {
			t.Errorf("README documents %s, which ragproxy does not read", e)
		}
	}
	for e := range be.vars {
		if !documented[e] {
			t.Errorf("ragproxy reads %s, which the README's Configuration table does not document", e)
		}
	}
}

// flagsOf returns the variables the flag falls back to.
func (be binaryEnv) flagsOf(flag string) map[string]bool {
	out := map[string]bool{}
	for e, fs := range be.flags {
		if fs[flag] {
			out[e] = true
		}
	}
	return out
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
