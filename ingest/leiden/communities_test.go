package leiden

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ragproxy/ragproxy/index"
)

// TestCommunities uses two 6-page cliques of directed links joined by one link (a 12-page component), a
// 3-page chain and an isolated page.
func TestCommunities(t *testing.T) {
	links := make([][]int, 16)
	for c := range 2 {
		for i := range 6 {
			for j := range 6 {
				if i != j {
					links[c*6+i] = append(links[c*6+i], c*6+j)
				}
			}
		}
	}
	links[0] = append(links[0], 11, 0, 11, 99, -1) // a bridge, a self-link, a repeat and two invalid ids
	links[12] = []int{13}
	links[14] = []int{13}
	got := Communities(16, links, CommunityConfig{})

	small := index.SmallComponentCommunity
	want := Assignment{
		Component:           []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2},
		Community:           []int{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, small, small, small, small},
		Communities:         2,
		SmallComponentPages: 4,
	}
	// Mutual links weigh 2 and the one-way bridge 1: m = 2*15*2 + 1 = 61, each clique holds 60 of the 122
	// degree sum plus one end of the bridge.
	wantQ := 2 * (60.0/122 - math.Pow(61.0/122, 2))
	if math.Abs(got.Modularity-wantQ) > 1e-12 {
		t.Errorf("Modularity = %v, want %v", got.Modularity, wantQ)
	}
	got.Modularity = 0
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("assignment (-want +got):\n%s", diff)
	}
}

func TestCommunitiesMinComponent(t *testing.T) {
	links := [][]int{{1}, {2}, {}, {}}
	got := Communities(4, links, CommunityConfig{MinComponent: 3})
	want := []int{0, 0, 0, index.SmallComponentCommunity}
	if diff := cmp.Diff(want, got.Community); diff != "" {
		t.Errorf("communities (-want +got):\n%s", diff)
	}
	if got.Communities != 1 || got.SmallComponentPages != 1 {
		t.Errorf("got %+v", got)
	}
	if none := Communities(3, nil, CommunityConfig{}); none.Communities != 0 || none.SmallComponentPages != 3 {
		t.Errorf("no links: %+v", none)
	}
}

func TestCommunityIDSkipsSmallComponent(t *testing.T) {
	for c, want := range map[int]int{0: 0, 9998: 9998, 9999: 10000, 12000: 12001} {
		if got := communityID(c); got != want || got == index.SmallComponentCommunity {
			t.Errorf("communityID(%d) = %d, want %d", c, got, want)
		}
	}
}

// TestCommunitiesKarateDirected folds a directed version of the karate club (every edge one way) and checks
// the Leiden part keeps its quality and connectivity.
func TestCommunitiesKarateDirected(t *testing.T) {
	tg := karateGraph()
	links := make([][]int, tg.n)
	for _, e := range tg.edges {
		links[e.u] = append(links[e.u], e.v)
	}
	a := Communities(tg.n, links, CommunityConfig{})
	if a.Modularity < 0.41 || a.SmallComponentPages != 0 {
		t.Errorf("karate: %+v", a)
	}
	checkConnected(t, tg, a.Community)
}
