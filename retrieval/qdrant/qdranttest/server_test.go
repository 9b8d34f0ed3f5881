package qdranttest

import (
	"context"
	"net/url"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/qdrant/go-client/qdrant"
)

// TestAliases checks the fake's alias rules, which the adapter's version switch relies on: a request applies
// all its actions or none, aliases resolve for reads, cannot take a collection's name, and go with their
// collection.
func TestAliases(t *testing.T) {
	f, addr := NewServer(t)
	ctx := context.Background()
	c, err := qdrant.NewClient(&qdrant.Config{Host: "127.0.0.1", Port: port(t, addr), SkipCompatibilityCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, name := range []string{"a", "b"} {
		err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: name,
			VectorsConfig: qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{"dense": {Size: 2, Distance: qdrant.Distance_Cosine}})})
		if err != nil {
			t.Fatal(err)
		}
	}
	create := func(alias, coll string) *qdrant.AliasOperations {
		return &qdrant.AliasOperations{Action: &qdrant.AliasOperations_CreateAlias{CreateAlias: &qdrant.CreateAlias{AliasName: alias, CollectionName: coll}}}
	}
	del := func(alias string) *qdrant.AliasOperations {
		return &qdrant.AliasOperations{Action: &qdrant.AliasOperations_DeleteAlias{DeleteAlias: &qdrant.DeleteAlias{AliasName: alias}}}
	}
	if err := c.UpdateAliases(ctx, []*qdrant.AliasOperations{create("live", "a")}); err != nil {
		t.Fatal(err)
	}
	// A request whose second action fails leaves the first undone.
	if err := c.UpdateAliases(ctx, []*qdrant.AliasOperations{del("live"), create("live", "missing")}); err == nil {
		t.Error("alias to a missing collection accepted")
	}
	if err := c.UpdateAliases(ctx, []*qdrant.AliasOperations{create("b", "a")}); err == nil {
		t.Error("alias with a collection's name accepted")
	}
	if diff := cmp.Diff(map[string]string{"live": "a"}, f.Aliases()); diff != "" {
		t.Errorf("aliases after failed requests (-want +got):\n%s", diff)
	}
	if err := c.UpdateAliases(ctx, []*qdrant.AliasOperations{del("live"), create("live", "b")}); err != nil {
		t.Fatal(err)
	}
	if info, err := c.GetCollectionInfo(ctx, "live"); err != nil || info.GetPointsCount() != 0 {
		t.Errorf("read through the alias = %v, %v", info, err)
	}
	if err := c.CreateCollection(ctx, &qdrant.CreateCollection{CollectionName: "live",
		VectorsConfig: qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{"dense": {Size: 2, Distance: qdrant.Distance_Cosine}})}); err == nil {
		t.Error("collection with an alias's name accepted")
	}
	if err := c.DeleteCollection(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if len(f.Aliases()) != 0 {
		t.Errorf("aliases after deleting their collection: %v", f.Aliases())
	}
	names, err := c.ListCollections(ctx)
	if err != nil || !cmp.Equal([]string{"a"}, names) {
		t.Errorf("ListCollections = %v, %v; want [a]", names, err)
	}
}

func port(t *testing.T, raw string) int {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return p
}
