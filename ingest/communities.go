package ingest

import (
	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest/leiden"
)

// communities finds components and Leiden communities over LINKS_TO.
func (r *run) communities(ix *index.Index) error {
	adj := make([][]int, len(ix.Pages))
	for i, p := range ix.Pages {
		adj[i] = p.Links
	}
	a := leiden.Communities(len(ix.Pages), adj, r.cfg.Graph)
	for i := range ix.Pages {
		ix.Pages[i].Component = a.Component[i]
		ix.Pages[i].Community = a.Community[i]
	}
	ix.Manifest.Communities = a.Communities
	ix.Manifest.Modularity = a.Modularity
	ix.Manifest.SmallComponentPages = a.SmallComponentPages
	return nil
}
