package eval

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestContainsFact(t *testing.T) {
	tests := []struct {
		text, fact string
		want       bool
	}{
		{"Instruction Begins | Wednesday, August 24, 2016 |", "Wednesday, August 24, 2016", true},
		{"the **maximum  of two\ncourses** applies", "maximum of two courses", true},
		{"Chair: _Shachar Kariv_", "shachar kariv", true},
		{"three courses", "two courses", false},
		{"| `CHK03` | No [`KEYS`](https://example.org/signing.html#keys) file was found |", "No KEYS file was found", true},
		{"see [the policy](https://example.org/no-keys-file-was-found)", "no-keys-file-was-found", false},
		{"| Level | Numeric value |\n|---|---|\n| `ERROR` | 40 |", "ERROR 40", true},
		{"| `'^'` | Forces the field to be centered |", "'^' Forces the field to be centered", true},
		{"| ERROR | 30 |\n| WARNING | 40 |", "ERROR 40", false},
	}
	for _, tt := range tests {
		if got := ContainsFact(tt.text, tt.fact); got != tt.want {
			t.Errorf("ContainsFact(%q, %q) = %v, want %v", tt.text, tt.fact, got, tt.want)
		}
	}
}

func TestMatches(t *testing.T) {
	if !matches("http://guide.berkeley.edu/2016-17/academic-calendar/", []string{"/2016-17/academic-calendar"}) {
		t.Error("a site path should match the page URL with or without the trailing slash")
	}
	if matches("http://guide.berkeley.edu/2016-17/academic-calendar/", []string{"/2016-17/academic-policies/"}) {
		t.Error("different paths must not match")
	}
}

func TestLoadQuestionsRejectsBadLines(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"notjson.jsonl":    "{not json}\n",
		"nourl.jsonl":      `{"id":"x","question":"q","fact":"f"}` + "\n",
		"noquestion.jsonl": `{"id":"x","expected_urls":["/a/"]}` + "\n",
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := LoadQuestions(p); err == nil {
			t.Errorf("%s: LoadQuestions accepted a bad line", name)
		}
	}
	p := filepath.Join(dir, "ok.jsonl")
	os.WriteFile(p, []byte(`{"id":"a","question":"q?","expected_urls":["/a/"],"fact":"f"}`+"\n\n"), 0o644)
	qs, err := LoadQuestions(p)
	if err != nil || len(qs) != 1 || qs[0].ExpectedURLs[0] != "/a/" {
		t.Errorf("LoadQuestions = %+v, %v", qs, err)
	}
}

func TestAnswerAsShown(t *testing.T) {
	answer := "> To launch Python 3.7, try the command:\n> ```\n> py -3.7\n> ```\n\n— [Using Python on Windows](https://docs.python.org/3/using/windows.html)\n"
	if !ContainsFact(shown(answer), "try the command: py -3.7") {
		t.Errorf("a fact quoted across lines is not read whole in %q", shown(answer))
	}
	if ContainsFact(answer, "try the command: py -3.7") {
		t.Errorf("the quote markers do not stand between the lines: the test reads nothing")
	}
	long := "> " + strings.Repeat("x", LeadChars) + "\n"
	if got := lead(long); got != strings.Repeat("x", LeadChars) {
		t.Errorf("lead reads %d characters, want %d without the quote marker", len(got), LeadChars)
	}
	if got := lead("> é\n"); got != "é\n" {
		t.Errorf("lead(%q) = %q", "> é\n", got)
	}
}
