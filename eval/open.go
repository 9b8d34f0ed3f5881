package eval

import (
	"context"
	"fmt"
	"io"

	"github.com/ragproxy/ragproxy/embedding"
	"github.com/ragproxy/ragproxy/retrieval"
	"github.com/ragproxy/ragproxy/tokenizer"
)

// SiteOptions are what the evaluations of several sites by one command share (see OpenSite).
type SiteOptions struct {
	// Retrieval is the retrieval configuration evaluated.
	Retrieval retrieval.Config
	// Embedder embeds the questions with the model the index was built with; nil: the index's local embedder.
	Embedder embedding.Embedder
	// Tokenizer counts the context's tokens. Required.
	Tokenizer *tokenizer.Tokenizer
	// Ablations runs the ablation table of Retrieval.
	Ablations bool
	// Scope, when set, limits the searches to a section assistant's pages, named Assistant in the report and
	// AssistantFrom (where it is defined) in errors.
	Scope                    *retrieval.Scope
	Assistant, AssistantFrom string
	// Analyzer and AnalyzerName, Judge and Repeats are Site's.
	Analyzer     retrieval.Analyzer
	AnalyzerName string
	Judge        *Judge
	Repeats      int
}

// OpenSite loads the question set and opens the index dir for Site.Run, scoped as o says.
func OpenSite(dir, questions string, o SiteOptions) (Site, error) {
	site := Site{Index: dir, Questions: questions, Repeats: o.Repeats, Analyzer: o.Analyzer, AnalyzerName: o.AnalyzerName,
		Judge: o.Judge}
	var err error
	if site.Set, err = LoadQuestions(questions); err != nil {
		return Site{}, err
	}
	if site.Retriever, err = retrieval.Open(dir, o.Embedder, o.Tokenizer, o.Retrieval); err != nil {
		return Site{}, fmt.Errorf("eval: %w", err)
	}
	if o.Scope != nil {
		if err := o.Scope.Check(site.Retriever.Index()); err != nil {
			return Site{}, fmt.Errorf("eval: %s: %w", o.AssistantFrom, err)
		}
		site.Retriever = site.Retriever.WithScope(o.Scope)
		site.Assistant = o.Assistant
	}
	if o.Ablations {
		cfg := o.Retrieval
		site.Ablations = &cfg
	}
	return site, nil
}

// RunSites evaluates each index dirs[i] on its question set questions[i] (OpenSite, then Site.Run), writes each
// report's markdown to w as it is done, and returns the reports.
func RunSites(ctx context.Context, w io.Writer, dirs, questions []string, o SiteOptions) ([]Report, error) {
	var reps []Report
	for i := range dirs {
		site, err := OpenSite(dirs[i], questions[i], o)
		if err != nil {
			return nil, err
		}
		rep, err := site.Run(ctx)
		if err != nil {
			return nil, err
		}
		if _, err := io.WriteString(w, rep.Markdown()); err != nil {
			return nil, err
		}
		reps = append(reps, rep)
	}
	return reps, nil
}
