package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/ragproxy/ragproxy/eval"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/faq"
	"github.com/ragproxy/ragproxy/tokenizer"
)

func runEval(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	var (
		up                      upstreamFlags
		rf                      retrievalFlags
		dirs, questions         repeated
		jsonOut                 string
		ablations               bool
		minFact, minHit, minMRR float64
		repeats                 int
		faqFile, faqQuestions   string
		faqThreshold, minFAQ    float64
		assistantSpec           string
		assistants              assistantFlags
	)
	fs.Var(&dirs, "index", "index directory (RAGPROXY_INDEX); repeat it, with --questions, to evaluate several sites")
	fs.Var(&questions, "questions", "question set (JSONL: question, expected_urls, fact), one per --index")
	fs.StringVar(&jsonOut, "json", "", "also write the report as JSON to this file ('-' for stdout); an array of reports for several sites")
	fs.BoolVar(&ablations, "ablations", true, "run the ablation table")
	fs.Float64Var(&minFact, "min-fact-in-context", 0, "fail when fact-in-context is below this (on any site)")
	fs.Float64Var(&minHit, "min-hit8", 0, "fail when page Hit@8 is below this (on any site)")
	fs.Float64Var(&minMRR, "min-mrr", 0, "fail when page MRR is below this (on any site)")
	fs.IntVar(&repeats, "answer-repeats", 1, "with an upstream: answer each question this many times and judge each")
	fs.StringVar(&faqFile, "faq", envOr("RAGPROXY_FAQ", ""), "operator FAQ file (JSONL, JSON or YAML) to calibrate direct answers on (RAGPROXY_FAQ)")
	fs.StringVar(&faqQuestions, "faq-questions", "", "labelled FAQ questions (JSONL: question, faq = the FAQ question it asks or \"\" for none); with --faq")
	fs.Float64Var(&faqThreshold, "faq-threshold", faq.DefaultDirectThreshold, "direct-answer threshold to report besides the calibrated one (serve's --faq-threshold)")
	fs.Float64Var(&minFAQ, "min-faq-precision", 0.98, "fail when direct answers at --faq-threshold are less precise than this")
	fs.StringVar(&assistantSpec, "assistant", "", "evaluate as this section assistant: NAME, defined in --assistants, or NAME=PREFIX[,PREFIX...]; only its pages are searched")
	fs.StringVar(&assistants.file, "assistants", envOr("RAGPROXY_ASSISTANTS", ""), "YAML or JSON file of section assistants, as serve reads it (RAGPROXY_ASSISTANTS)")
	up.register(fs)
	rf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(dirs) == 0 {
		if d := envOr("RAGPROXY_INDEX", ""); d != "" {
			dirs = repeated{d}
		}
	}
	if (faqFile == "") != (faqQuestions == "") {
		return fmt.Errorf("eval: --faq and --faq-questions go together")
	}
	if faqFile != "" {
		lines, err := eval.CheckFAQ(faqFile, faqQuestions, faqThreshold, minFAQ)
		for _, l := range lines {
			fmt.Println(l)
		}
		if err != nil {
			return err
		}
		if len(dirs) == 0 && len(questions) == 0 {
			return nil
		}
	}
	if len(dirs) == 0 || len(dirs) != len(questions) {
		return fmt.Errorf("eval: --index and --questions are required, as many of one as of the other (or --faq and --faq-questions)")
	}
	up.key = os.Getenv("OPENAI_API_KEY")
	tok, err := tokenizer.New()
	if err != nil {
		return err
	}
	site := siteEval{up: &up, rf: &rf, tok: tok, ablations: ablations, repeats: repeats, assistantSpec: assistantSpec,
		assistants: &assistants}
	var reps []eval.Report
	for i := range dirs {
		rep, err := site.run(ctx, dirs[i], questions[i])
		if err != nil {
			return err
		}
		fmt.Print(rep.Markdown())
		reps = append(reps, rep)
	}
	if jsonOut != "" {
		w := os.Stdout
		if jsonOut != "-" {
			if w, err = os.Create(jsonOut); err != nil {
				return fmt.Errorf("eval: %w", err)
			}
			defer w.Close()
		}
		if err := eval.WriteJSON(w, reps); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
	}
	return eval.Bars{FactInContext: minFact, Hit8: minHit, MRR: minMRR}.Check(reps)
}

// siteEval is what the evaluation of every site of one eval command shares.
type siteEval struct {
	up            *upstreamFlags
	rf            *retrievalFlags
	tok           *tokenizer.Tokenizer
	ablations     bool
	repeats       int
	assistantSpec string // --assistant: evaluate within that section assistant's scope
	assistants    *assistantFlags
}

// run evaluates retrieval (and, with an upstream, answers) on one index and its question set.
func (e *siteEval) run(ctx context.Context, dir, questions string) (eval.Report, error) {
	site := eval.Site{Index: dir, Questions: questions, Repeats: e.repeats}
	var err error
	if site.Set, err = eval.LoadQuestions(questions); err != nil {
		return eval.Report{}, err
	}
	remote, err := e.up.openaiEmbedder()
	if err != nil {
		return eval.Report{}, fmt.Errorf("eval: %w", err)
	}
	if site.Retriever, err = retrieval.Open(dir, remote, e.tok, e.rf.config()); err != nil {
		return eval.Report{}, fmt.Errorf("eval: %w", err)
	}
	if e.assistantSpec != "" {
		a, err := e.assistants.evalAssistant(e.assistantSpec)
		if err != nil {
			return eval.Report{}, fmt.Errorf("eval: %w", err)
		}
		if err := a.Scope.Check(site.Retriever.Index()); err != nil {
			return eval.Report{}, fmt.Errorf("eval: %s: %w", a.From, err)
		}
		site.Retriever = site.Retriever.WithScope(a.Scope)
		site.Assistant = a.Name + " (" + strings.Join(a.Prefixes, ", ") + ")"
	}
	if e.ablations {
		cfg := e.rf.config()
		site.Ablations = &cfg
	}
	if e.up.online() {
		ask, err := e.up.ask()
		if err != nil {
			return eval.Report{}, fmt.Errorf("eval: %w", err)
		}
		site.Analyzer, site.AnalyzerName = &retrieval.LLMAnalyzer{Ask: ask}, "llm "+e.up.model
		site.Judge = &eval.Judge{Client: e.up.client(), Model: e.up.model}
	}
	return site.Run(ctx)
}

// retrievalFlags are retrieval's constants, shared by serve and eval.
type retrievalFlags struct {
	cfg     retrieval.Config
	noComms bool
}

func (f *retrievalFlags) register(fs *flag.FlagSet) {
	d := retrieval.DefaultConfig()
	fs.IntVar(&f.cfg.PagesPerList, "pages-per-list", d.PagesPerList, "pages each search list contributes")
	fs.IntVar(&f.cfg.FusedPages, "fused-pages", d.FusedPages, "fused pages that go to community selection")
	fs.IntVar(&f.cfg.KeepPages, "keep-pages", d.KeepPages, "pages community selection keeps")
	fs.BoolVar(&f.noComms, "no-communities", d.NoCommunities, "skip community selection")
	fs.IntVar(&f.cfg.ProtectPages, "protect-pages", d.ProtectPages, "best fused pages community selection always keeps (negative: none)")
	fs.IntVar(&f.cfg.ChunksPerList, "chunks-per-list", d.ChunksPerList, "chunks each chunk search returns per query")
	fs.Float64Var(&f.cfg.PageBoost, "page-boost", d.PageBoost, "fused chunk scores times 1 + this / (1 + the page's rank) (negative: none)")
	fs.IntVar(&f.cfg.KeepChunks, "keep-chunks", d.KeepChunks, "fused chunks the context may use")
	fs.BoolVar(&f.cfg.NoPassageRerank, "no-passage-rerank", d.NoPassageRerank, "keep the fused chunk order instead of reranking passages by their coverage of the question")
	fs.BoolVar(&f.cfg.NoSectionPassages, "no-section-passages", d.NoSectionPassages, "let passage windows run across markdown headings into the next section (by default a window stays within a section and its subsections)")
	fs.BoolVar(&f.cfg.NoQuantities, "no-quantities", d.NoQuantities, "do not count a number in a passage as a term of a question asking for a quantity (how long, how many, max size)")
	fs.BoolVar(&f.cfg.ExactChunkSearch, "exact-chunk-search", d.ExactChunkSearch, "search every chunk vector for the chunk-dense page list, also where the index has IVF lists (sites of 50,000 chunks and more)")
	fs.Float64Var(&f.cfg.RRFK, "rrf-k", d.RRFK, "reciprocal rank fusion K (0: the number of fused lists)")
	fs.IntVar(&f.cfg.RRFRankBase, "rrf-rank-base", d.RRFRankBase, "rank of a list's first item in fusion (0 or 1)")
	fs.Float64Var(&f.cfg.PassagePrior, "passage-prior", d.PassagePrior, "kept pages reordered by score times (0.05 + best passage coverage)^this (negative: none)")
	fs.Float64Var(&f.cfg.LeadRatio, "lead-ratio", d.LeadRatio, "a BM25 page list's first page votes twice when its score is at least this times the next page's (negative: never)")
	fs.Float64Var(&f.cfg.LinkPrior, "link-prior", d.LinkPrior, "fused page scores times 1 + this × ln(1 + inbound links) (negative: none)")
	fs.IntVar(&f.cfg.ContextTokens, "context-tokens", d.ContextTokens, "context budget in tokens")
	fs.BoolVar(&f.cfg.NoWordNet, "no-wordnet", d.NoWordNet, "leave WordNet out of query expansion and passage selection (synonyms of the question's words, bases of its comparatives and superlatives, related words in passages)")
	fs.Float64Var(&f.cfg.ConfidenceFloor, "confidence-floor", d.ConfidenceFloor, "similarity below which the answer is \"I don't know\"")
}

func (f *retrievalFlags) config() retrieval.Config {
	c := f.cfg
	c.NoCommunities = f.noComms
	return c
}
