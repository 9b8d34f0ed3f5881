package eval_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/ragproxy/ragproxy/eval"
	"github.com/ragproxy/ragproxy/examples"
	"github.com/ragproxy/ragproxy/internal/corpustest"
	"github.com/ragproxy/ragproxy/internal/indextest"
	"github.com/ragproxy/ragproxy/retrieval"
)

// floor is the least quality a change may leave; CI fails below it, so a change that hurts retrieval cannot land.
// answer and lead, where set, are the least shares of offline answers holding the fact anywhere and within their
// first eval.LeadChars characters.
type floor struct {
	fact, hit8, mrr, answer, lead float64
	// chars is the longest median offline answer, in characters; 0 sets none.
	chars int
}

// answerChars is the longest median offline answer a dev set may have: a reader takes in about that much.
const answerChars = 1200

// Offline quality (local embedder, extractive summaries, heuristic rewrites) on each dev site's questions, just
// under what retrieval reaches there; raise a floor when a change lifts its site.
var (
	// The Berkeley guide (RAGPROXY_TEST_CORPUS, RAGPROXY_TEST_EVAL): 24 questions.
	berkeleyFloor = floor{fact: 0.95, hit8: 0.97, mrr: 0.92, answer: 0.78, lead: 0.74, chars: answerChars}
	// The ASF Infrastructure help centre (RAGPROXY_TEST_CORPUS_ASF, RAGPROXY_TEST_EVAL_ASF): 30 questions, with
	// blog posts and newsletters that repeat the policy pages' facts. One question ("how long is the link good
	// for", answered by a "reset key" sentence) reached its page only through the "Permanent link" anchors of
	// the page's headings; the cleaner removes them, so Hit@8 and fact-in-context are 29 of 30.
	asfFloor = floor{fact: 0.96, hit8: 0.96, mrr: 0.85, answer: 0.65, lead: 0.58, chars: answerChars}

	// Held-out questions (testdata/heldout, 30 per site, see its README): written after the settings were
	// chosen, to check that a change helps questions it was not made for. Check them; never tune to them.
	berkeleyHeldOutFloor = floor{fact: 0.93, hit8: 0.92, mrr: 0.85}
	asfHeldOutFloor      = floor{fact: 0.96, hit8: 0.96, mrr: 0.79}
	// Follow-ups on the Berkeley guide (testdata/conversations/berkeley.jsonl, 9: "and for spring 2017?" after
	// when fall instruction starts): read joined to the question before, as the heuristic analysis reads them.
	berkeleyFollowUpFloor = floor{fact: 0.85, hit8: 0.9, mrr: 0.85, answer: 0.55, lead: 0.33, chars: answerChars}

	// Sites from other generators, each with its own dev and (but Git's) held-out questions (testdata/dev,
	// testdata/heldout), installed from Debian's packages.
	//
	// The Python 3.11 documentation (RAGPROXY_TEST_CORPUS_PYDOCS; python3.11-doc): Sphinx, 530 pages, many of
	// them long reference pages. Its held-out questions ask mostly in other words than the pages' (a "ring
	// buffer" for a deque with a maximum length, "named after the snake" for the Monty Python sentence), which
	// the local embedder does not bridge.
	pythonDevFloor     = floor{fact: 0.95, hit8: 0.97, mrr: 0.87, answer: 0.54, lead: 0.48, chars: answerChars}
	pythonHeldOutFloor = floor{fact: 0.65, hit8: 0.78, mrr: 0.66}
	// The Debian Administrator's Handbook (RAGPROXY_TEST_CORPUS_DEBIAN_HANDBOOK; debian-handbook, its en-US
	// HTML): Publican (DocBook), 127 pages, with facts in the book's boxed sidebars.
	handbookDevFloor     = floor{fact: 0.90, hit8: 0.90, mrr: 0.86, answer: 0.71, lead: 0.58, chars: answerChars}
	handbookHeldOutFloor = floor{fact: 0.96, hit8: 0.96, mrr: 0.90}
	// The PostgreSQL 15 documentation (RAGPROXY_TEST_CORPUS_POSTGRESQL; postgresql-doc-15): the DocBook XSL
	// stylesheets, 1,169 pages, with many short reference pages and long tables of settings and types.
	postgresDevFloor     = floor{fact: 0.95, hit8: 0.95, mrr: 0.78, answer: 0.47, lead: 0.34, chars: answerChars}
	postgresHeldOutFloor = floor{fact: 0.90, hit8: 0.97, mrr: 0.84}
	// Git's manual pages (RAGPROXY_TEST_CORPUS_GIT_DOC; git-doc): AsciiDoc, 241 pages, each command's page
	// opening with its NAME line ("git-clean - Remove untracked files from the working tree"). Its questions
	// describe a task in a user's words and rarely name the command ("who changed this line" for git-blame,
	// "put aside uncommitted work" for git-stash), and every page writes "commit", "branch" and "file": offline,
	// lexical search and the local embedder find the command's page for half of them.
	gitDevFloor = floor{fact: 0.40, hit8: 0.49, mrr: 0.30, answer: 0.18, lead: 0.13, chars: answerChars}
)

// heldOut loads a held-out question set of testdata/heldout.
func heldOut(t *testing.T, name string) []eval.Question {
	t.Helper()
	return testQuestions(t, "heldout", name)
}

// dev loads a dev question set of testdata/dev.
func dev(t *testing.T, name string) []eval.Question {
	t.Helper()
	return testQuestions(t, "dev", name)
}

func testQuestions(t *testing.T, dir, name string) []eval.Question {
	t.Helper()
	qs, err := eval.LoadQuestions(filepath.Join("testdata", dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

// asfBaseURL is the address the ASF Infrastructure mirror was saved from: DIR/a.html is asfBaseURL + "a.html".
const asfBaseURL = "https://infra.apache.org/"

// The example site is small and written to be answerable: retrieval must find nearly everything.
var exampleFloor = floor{fact: 0.96, hit8: 0.96, mrr: 0.80}

func TestBerkeleyDevQuality(t *testing.T) {
	corpus := corpustest.Dir(t)
	qs, err := eval.LoadQuestions(corpustest.QuestionsPath(t))
	if err != nil {
		t.Skipf("no question set: %v", err)
	}
	checkQuality(t, corpus, corpustest.BaseURL, questionSet{"dev", qs, berkeleyFloor},
		questionSet{"held-out", heldOut(t, "berkeley-heldout.jsonl"), berkeleyHeldOutFloor},
		questionSet{"follow-ups", testQuestions(t, "conversations", "berkeley.jsonl"), berkeleyFollowUpFloor})
}

func TestASFDevQuality(t *testing.T) {
	corpus, questions := os.Getenv("RAGPROXY_TEST_CORPUS_ASF"), os.Getenv("RAGPROXY_TEST_EVAL_ASF")
	if corpus == "" || questions == "" {
		t.Skip("RAGPROXY_TEST_CORPUS_ASF and RAGPROXY_TEST_EVAL_ASF are not set")
	}
	qs, err := eval.LoadQuestions(questions)
	if err != nil {
		t.Fatal(err)
	}
	checkQuality(t, corpus, asfBaseURL, questionSet{"dev", qs, asfFloor},
		questionSet{"held-out", heldOut(t, "asf-heldout.jsonl"), asfHeldOutFloor})
}

// Where the Debian-packaged sites are published: DIR/library/os.html is pythonDocsBaseURL + "library/os.html".
const (
	pythonDocsBaseURL = "https://docs.python.org/3.11/"
	handbookBaseURL   = "https://debian-handbook.info/browse/en-US/stable/"
	postgresBaseURL   = "https://www.postgresql.org/docs/15/"
	gitDocBaseURL     = "https://git-scm.com/docs/"
)

func TestPythonDocsQuality(t *testing.T) {
	checkPackagedSite(t, "RAGPROXY_TEST_CORPUS_PYDOCS", "/usr/share/doc/python3.11/html", pythonDocsBaseURL,
		questionSet{"dev", dev(t, "python-dev.jsonl"), pythonDevFloor},
		questionSet{"held-out", heldOut(t, "python-heldout.jsonl"), pythonHeldOutFloor})
}

func TestDebianHandbookQuality(t *testing.T) {
	checkPackagedSite(t, "RAGPROXY_TEST_CORPUS_DEBIAN_HANDBOOK", "/usr/share/doc/debian-handbook/html/en-US",
		handbookBaseURL, questionSet{"dev", dev(t, "debian-handbook-dev.jsonl"), handbookDevFloor},
		questionSet{"held-out", heldOut(t, "debian-handbook-heldout.jsonl"), handbookHeldOutFloor})
}

func TestPostgreSQLDocsQuality(t *testing.T) {
	checkPackagedSite(t, "RAGPROXY_TEST_CORPUS_POSTGRESQL", "/usr/share/doc/postgresql-doc-15/html", postgresBaseURL,
		questionSet{"dev", dev(t, "postgresql-dev.jsonl"), postgresDevFloor},
		questionSet{"held-out", heldOut(t, "postgresql-heldout.jsonl"), postgresHeldOutFloor})
}

func TestGitDocsQuality(t *testing.T) {
	checkPackagedSite(t, "RAGPROXY_TEST_CORPUS_GIT_DOC", "/usr/share/doc/git-doc", gitDocBaseURL,
		questionSet{"dev", dev(t, "git-dev.jsonl"), gitDevFloor})
}

// checkPackagedSite checks the question sets of a site a Debian package installs, found at the directory env
// names (the package's: where).
func checkPackagedSite(t *testing.T, env, where, base string, sets ...questionSet) {
	t.Helper()
	corpus := os.Getenv(env)
	if corpus == "" {
		t.Skipf("%s is not set (the site's HTML, installed at %s)", env, where)
	}
	checkQuality(t, corpus, base, sets...)
}

func TestExampleSiteQuality(t *testing.T) {
	path := filepath.Join(t.TempDir(), "questions.jsonl")
	if err := os.WriteFile(path, examples.Questions, 0o644); err != nil {
		t.Fatal(err)
	}
	qs, err := eval.LoadQuestions(path)
	if err != nil {
		t.Fatal(err)
	}
	checkQuality(t, indextest.ExampleSite(t), examples.BaseURL, questionSet{"example", qs, exampleFloor})
}

// questionSet is a set of questions over a site and the floor it is held to.
type questionSet struct {
	name      string
	questions []eval.Question
	min       floor
}

// checkQuality indexes site and holds each question set to its floor; it returns the index's directory.
func checkQuality(t *testing.T, site, base string, sets ...questionSet) string {
	t.Helper()
	idx := t.TempDir()
	indextest.Build(t, site, base, idx)
	r, _ := indextest.Open(t, idx)
	for _, set := range sets {
		m, err := eval.Retrieve(context.Background(), r, retrieval.Heuristic{}, set.questions)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s, %d questions: fact-in-context %.3f, Hit@1 %.3f, Hit@8 %.3f, MRR %.3f; offline answers: fact %.3f, in the lead %.3f, median %d characters",
			set.name, m.Questions, m.FactInContext, m.Hit[1], m.Hit[8], m.MRR, m.FactInAnswer, m.FactInLead, m.AnswerChars)
		t.Logf("%s: fact in the best passage %.3f, in the best %d %.3f; in the best evidence units (%v) %v",
			set.name, m.FactInBestPassage, eval.BestPassages, m.FactInBestPassages, eval.UnitKs, m.FactInUnits)
		for _, x := range m.Misses {
			t.Logf("%s miss %s (rank %d, fact %v): %s", set.name, x.ID, x.Rank, x.FactFound, x.Question)
		}
		// Where the fact is narrows as the places it is looked for do: the best passage of the context, the best
		// few passages, the context; the best unit, the best few units.
		within := []float64{m.FactInBestPassage, m.FactInBestPassages, m.FactInContext}
		for _, k := range eval.UnitKs {
			within = append(within, m.FactInUnits[k])
		}
		if !sort.Float64sAreSorted(within[:3]) || !sort.Float64sAreSorted(within[3:]) || within[len(within)-1] > m.FactInContext {
			t.Errorf("%s: where the fact is does not narrow: passages %v, units %v (context %.3f)", set.name, within[:3], within[3:], m.FactInContext)
		}
		if min := set.min; m.FactInContext < min.fact || m.Hit[8] < min.hit8 || m.MRR < min.mrr {
			t.Errorf("%s: quality below the floor: fact-in-context %.3f (min %.2f), Hit@8 %.3f (min %.2f), MRR %.3f (min %.2f)",
				set.name, m.FactInContext, min.fact, m.Hit[8], min.hit8, m.MRR, min.mrr)
		}
		if min := set.min; m.FactInAnswer < min.answer || m.FactInLead < min.lead {
			t.Errorf("%s: offline answers below the floor: fact in the answer %.3f (min %.2f), in its first %d characters %.3f (min %.2f)",
				set.name, m.FactInAnswer, min.answer, eval.LeadChars, m.FactInLead, min.lead)
		}
		if max := set.min.chars; max > 0 && m.AnswerChars > max {
			t.Errorf("%s: offline answers %d characters at the median, more than %d", set.name, m.AnswerChars, max)
		}
	}
	return idx
}
