package retrieval

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

func TestZZKinds(t *testing.T) {
	f := os.Getenv("ZZQ")
	if f == "" {
		t.Skip()
	}
	for _, p := range []string{"/work/shared/eval/berkeley-dev.jsonl", "/work/shared/eval/asf-infra-dev.jsonl", "/work/main/eval/testdata/dev/python-dev.jsonl", "/work/main/eval/testdata/dev/debian-handbook-dev.jsonl", "/work/main/eval/testdata/dev/postgresql-dev.jsonl"} {
		fh, _ := os.Open(p)
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			var q struct{ ID, Question, Fact string }
			json.Unmarshal(sc.Bytes(), &q)
			k, _ := questionKind(q.Question)
			fmt.Printf("KIND %s %d %s || %s\n", q.ID, k, q.Question, q.Fact)
		}
	}
}
