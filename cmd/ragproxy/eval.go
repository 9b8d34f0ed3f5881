package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/ragproxy/ragproxy/eval"
	"github.com/ragproxy/ragproxy/grounding"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/retrieval/faq"
	"github.com/ragproxy/ragproxy/tokenizer"
)

func runEval(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	var (
		up                                                            upstreamFlags
		dirs, questions                                               repeated
		jsonOut, faqFile, faqQuestions, assistantSpec, assistantsFile string
		faqThreshold, minFAQ                                          float64
		o                                                             eval.SiteOptions
		bars                                                          eval.Bars
	)
	fs.Var(&dirs, "index", "index directory (RAGPROXY_INDEX); repeat it, with --questions, to evaluate several sites")
	fs.Var(&questions, "questions", "question set (JSONL: question, expected_urls, fact), one per --index")
	fs.StringVar(&jsonOut, "json", "", "also write the report as JSON to this file ('-' for stdout); an array of reports for several sites")
	fs.BoolVar(&o.Ablations, "ablations", true, "run the ablation table")
	fs.Float64Var(&bars.FactInContext, "min-fact-in-context", 0, "fail when fact-in-context is below this (on any site)")
	fs.Float64Var(&bars.Hit8, "min-hit8", 0, "fail when page Hit@8 is below this (on any site)")
	fs.Float64Var(&bars.MRR, "min-mrr", 0, "fail when page MRR is below this (on any site)")
	fs.IntVar(&o.Repeats, "answer-repeats", 1, "with an upstream: answer each question this many times and judge each")
	fs.StringVar(&faqFile, "faq", envOr("RAGPROXY_FAQ", ""), "operator FAQ file (JSONL, JSON or YAML) to calibrate direct answers on (RAGPROXY_FAQ)")
	fs.StringVar(&faqQuestions, "faq-questions", "", "labelled FAQ questions (JSONL: question, faq = the FAQ question it asks or \"\" for none); with --faq")
	fs.Float64Var(&faqThreshold, "faq-threshold", faq.DefaultDirectThreshold, "direct-answer threshold to report besides the calibrated one (serve's --faq-threshold)")
	fs.Float64Var(&minFAQ, "min-faq-precision", 0.98, "fail when direct answers at --faq-threshold are less precise than this")
	fs.StringVar(&assistantSpec, "assistant", "", "evaluate as this section assistant: NAME, defined in --assistants, or NAME=PREFIX[,PREFIX...]; only its pages are searched")
	fs.StringVar(&assistantsFile, "assistants", envOr("RAGPROXY_ASSISTANTS", ""), "YAML or JSON file of section assistants, as serve reads it (RAGPROXY_ASSISTANTS)")
	up.register(fs)
	registerRetrieval(fs, &o.Retrieval)
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
	var err error
	if o.Tokenizer, err = tokenizer.New(); err != nil {
		return err
	}
	if o.Embedder, err = up.openaiEmbedder(); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if assistantSpec != "" {
		a, err := grounding.FindAssistant(assistantsFile, assistantSpec)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		o.Scope, o.Assistant, o.AssistantFrom = a.Scope, a.Name+" ("+strings.Join(a.Prefixes, ", ")+")", a.From
	}
	if up.online() {
		ask, err := up.ask()
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		o.Analyzer, o.AnalyzerName = &retrieval.LLMAnalyzer{Ask: ask}, "llm "+up.model
		o.Judge = &eval.Judge{Client: up.client(), Model: up.model}
	}
	reps, err := eval.RunSites(ctx, os.Stdout, dirs, questions, o)
	if err != nil {
		return err
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
	return bars.Check(reps)
}

// registerRetrieval binds retrieval's constants, which serve and eval share, to c, with retrieval.DefaultConfig's
// values as their defaults.
func registerRetrieval(fs *flag.FlagSet, c *retrieval.Config) {
	d := retrieval.DefaultConfig()
	fs.IntVar(&c.PagesPerList, "pages-per-list", d.PagesPerList, "pages each search list contributes")
	fs.IntVar(&c.FusedPages, "fused-pages", d.FusedPages, "fused pages that go to community selection")
	fs.IntVar(&c.KeepPages, "keep-pages", d.KeepPages, "pages community selection keeps")
	fs.BoolVar(&c.NoCommunities, "no-communities", d.NoCommunities, "skip community selection")
	fs.IntVar(&c.ProtectPages, "protect-pages", d.ProtectPages, "best fused pages community selection always keeps (negative: none)")
	fs.IntVar(&c.ChunksPerList, "chunks-per-list", d.ChunksPerList, "chunks each chunk search returns per query")
	fs.Float64Var(&c.PageBoost, "page-boost", d.PageBoost, "fused chunk scores times 1 + this / (1 + the page's rank) (negative: none)")
	fs.IntVar(&c.KeepChunks, "keep-chunks", d.KeepChunks, "fused chunks the context may use")
	fs.BoolVar(&c.NoPassageRerank, "no-passage-rerank", d.NoPassageRerank, "keep the fused chunk order instead of reranking passages by their coverage of the question")
	fs.BoolVar(&c.NoSectionPassages, "no-section-passages", d.NoSectionPassages, "let passage windows run across markdown headings into the next section (by default a window stays within a section and its subsections)")
	fs.BoolVar(&c.NoQuantities, "no-quantities", d.NoQuantities, "do not count a number in a passage as a term of a question asking for a quantity (how long, how many, max size)")
	fs.BoolVar(&c.ExactChunkSearch, "exact-chunk-search", d.ExactChunkSearch, "search every chunk vector for the chunk-dense page list, also where the index has IVF lists (sites of 50,000 chunks and more)")
	fs.Float64Var(&c.RRFK, "rrf-k", d.RRFK, "reciprocal rank fusion K (0: the number of fused lists)")
	fs.IntVar(&c.RRFRankBase, "rrf-rank-base", d.RRFRankBase, "rank of a list's first item in fusion (0 or 1)")
	fs.Float64Var(&c.PassagePrior, "passage-prior", d.PassagePrior, "kept pages reordered by score times (0.05 + best passage coverage)^this (negative: none)")
	fs.Float64Var(&c.LeadRatio, "lead-ratio", d.LeadRatio, "a BM25 page list's first page votes twice when its score is at least this times the next page's (negative: never)")
	fs.Float64Var(&c.LinkPrior, "link-prior", d.LinkPrior, "fused page scores times 1 + this × ln(1 + inbound links) (negative: none)")
	fs.IntVar(&c.ContextTokens, "context-tokens", d.ContextTokens, "context budget in tokens")
	fs.BoolVar(&c.NoWordNet, "no-wordnet", d.NoWordNet, "leave WordNet out of query expansion and passage selection (synonyms of the question's words, bases of its comparatives and superlatives, related words in passages)")
	fs.Float64Var(&c.ConfidenceFloor, "confidence-floor", d.ConfidenceFloor, "similarity below which the answer is \"I don't know\"")
}
