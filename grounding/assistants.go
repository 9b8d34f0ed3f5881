package grounding

import (
	"github.com/ragproxy/ragproxy/retrieval"
)

// Assistant is a section assistant: a model id of its own whose retrieval considers only the pages under its URL
// prefixes (only the graduate pages, only one programme), filtered before ranking (see retrieval.Scope).
type Assistant struct {
	// Name is the assistant's model id. Chat requests for it (GroundRequest.Model) and /v1/retrieve requests
	// naming it are grounded in its pages alone. Required.
	Name string
	// SiteName names the assistant in the grounding prompt and in answers written without a model. Default
	// the Grounder's SiteName, a dash and Name ("Lakeshore Polytechnic — nursing").
	SiteName string
	// Scope holds its URL prefixes. Required.
	Scope *retrieval.Scope
}

// scopedSet holds each assistant's retriever over one index version, built when a request first searches it;
// prev is the set of the version before, kept so that while requests of both versions run (during a reload)
// neither set is rebuilt on every request.
type scopedSet struct {
	r    *retrieval.Retriever
	by   map[string]*retrieval.Retriever
	prev *scopedSet
}

// assistant returns the assistant serving model, or nil for any other model (the whole site).
func (g *Grounder) assistant(model string) *Assistant {
	for i := range g.Assistants {
		if g.Assistants[i].Name == model {
			return &g.Assistants[i]
		}
	}
	return nil
}

// retrieverFor returns what a request for model searches in the version r: r itself, or, for an assistant, r
// restricted to its scope. The restricted retrievers of a version are computed once (a pass over its pages per
// assistant) and kept for the two versions last asked about; a request always gets the retriever of the version
// it acquired.
func (g *Grounder) retrieverFor(r *retrieval.Retriever, model string) *retrieval.Retriever {
	a := g.assistant(model)
	if a == nil {
		return r
	}
	cur := g.scoped.Load()
	for set := cur; set != nil; set = set.prev {
		if set.r == r {
			return set.by[a.Name]
		}
	}
	set := &scopedSet{r: r, by: make(map[string]*retrieval.Retriever, len(g.Assistants))}
	for _, as := range g.Assistants {
		set.by[as.Name] = r.WithScope(as.Scope)
	}
	if cur != nil {
		set.prev = &scopedSet{r: cur.r, by: cur.by} // one version back, no further
	}
	g.scoped.Store(set)
	return set.by[a.Name]
}

// siteName is the name of the site, or of the assistant, that a request for model is answered as.
func (g *Grounder) siteName(model string) string {
	a := g.assistant(model)
	switch {
	case a == nil:
		return g.SiteName
	case a.SiteName != "":
		return a.SiteName
	case g.SiteName != "":
		return g.SiteName + " — " + a.Name
	}
	return a.Name
}
