package leiden

import (
	"slices"

	"github.com/ragproxy/ragproxy/index"
)

// CommunityConfig tunes Communities.
type CommunityConfig struct {
	// MinComponent is the smallest weakly connected component whose pages get Leiden communities; pages of
	// smaller components get index.SmallComponentCommunity. Default 10 (the FHNW prototype: "fewer than ten pages").
	MinComponent int
	// Leiden configures the community detection on the remaining pages.
	Leiden Config
}

// Assignment is the component and community of every page.
type Assignment struct {
	// Component is each page's weakly connected component, numbered 0.. by decreasing size (ties: smallest
	// page).
	Component []int
	// Community is each page's Leiden community (0..Communities-1, skipping index.SmallComponentCommunity),
	// or index.SmallComponentCommunity for pages of small components.
	Community []int
	// Communities is the number of distinct Leiden communities (not counting SmallComponentCommunity).
	Communities int
	// Modularity is the modularity of the Leiden partition on the graph without the small components.
	Modularity float64
	// SmallComponentPages counts the pages given SmallComponentCommunity.
	SmallComponentPages int
}

// Communities assigns communities to n pages whose directed out-links are links[i] (the FHNW prototype, "graph"): it
// finds the weakly connected components of the link graph, gives index.SmallComponentCommunity to pages of
// components under cfg.MinComponent pages, and runs Leiden on the undirected graph of the rest, where the
// weight between two pages is the number of distinct directed links between them (1 or 2). Self-links,
// repeated links and links to ids outside 0..n-1 are ignored.
func Communities(n int, links [][]int, cfg CommunityConfig) Assignment {
	if cfg.MinComponent <= 0 {
		cfg.MinComponent = 10
	}
	out := func(i int) []int {
		if i < len(links) {
			return links[i]
		}
		return nil
	}
	valid := func(i, j int) bool { return j >= 0 && j < n && j != i }

	// Weakly connected components with union-find.
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for i := range n {
		for _, j := range out(i) {
			if valid(i, j) {
				if a, b := find(i), find(j); a != b {
					parent[max(a, b)] = min(a, b)
				}
			}
		}
	}
	roots := make([]int, n)
	size := make(map[int]int)
	for i := range n {
		roots[i] = find(i)
		size[roots[i]]++
	}
	compOf := componentIDs(roots, size)

	a := Assignment{Component: compOf, Community: make([]int, n)}
	local := make([]int, n) // index of each page in the Leiden graph, or -1
	var pages []int
	for i := range n {
		local[i] = -1
		if size[roots[i]] < cfg.MinComponent {
			a.Community[i] = index.SmallComponentCommunity
			a.SmallComponentPages++
			continue
		}
		local[i] = len(pages)
		pages = append(pages, i)
	}
	if len(pages) == 0 {
		return a
	}

	g := NewGraph(len(pages))
	seen := make(map[int]bool)
	for _, i := range pages {
		clear(seen)
		for _, j := range out(i) {
			if valid(i, j) && !seen[j] && local[j] >= 0 {
				seen[j] = true
				g.AddEdge(local[i], local[j], 1) // a mutual pair adds up to weight 2
			}
		}
	}
	res := Run(g, cfg.Leiden)
	for li, i := range pages {
		a.Community[i] = communityID(res.Membership[li])
	}
	a.Communities = slices.Max(res.Membership) + 1
	a.Modularity = res.Modularity
	return a
}

// communityID maps a Leiden community number to a page community id, skipping SmallComponentCommunity so a
// graph with that many communities never collides with it.
func communityID(c int) int {
	if c >= index.SmallComponentCommunity {
		return c + 1
	}
	return c
}

// componentIDs numbers components by decreasing size, ties broken by their smallest page.
func componentIDs(roots []int, size map[int]int) []int {
	var order []int
	firstSeen := make(map[int]bool)
	for _, r := range roots {
		if !firstSeen[r] {
			firstSeen[r] = true
			order = append(order, r) // in order of smallest page
		}
	}
	slices.SortStableFunc(order, func(a, b int) int { return size[b] - size[a] })
	id := make(map[int]int, len(order))
	for k, r := range order {
		id[r] = k
	}
	comp := make([]int, len(roots))
	for i, r := range roots {
		comp[i] = id[r]
	}
	return comp
}
