package qdrant

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrVersionMissing is returned by searches and Verify when Qdrant has no collections for the index version: it
// has not been synced yet, or it was dropped because newer versions filled the kept ones (Config.KeepVersions).
// A server that gets it is serving an index older than Qdrant keeps, and must reload the current index.
var ErrVersionMissing = errors.New("qdrant holds no collections for this index version (not synced yet, or dropped as older than the kept versions)")

// versionRE is what an index version may look like to name collections: Manifest.Version is hex.
var versionRE = regexp.MustCompile(`^[0-9A-Za-z-]{1,64}$`)

func checkVersion(v string) error {
	if !versionRE.MatchString(v) {
		return fmt.Errorf("qdrant: index version %q: want 1 to 64 letters, digits or '-'", v)
	}
	return nil
}

// VersionCollections returns the names of the summaries and chunks collections of an index version:
// <name>_v<version>_summaries and <name>_v<version>_chunks.
func (s *Store) VersionCollections(version string) (summaries, chunks string) {
	return s.name + "_v" + version + "_summaries", s.name + "_v" + version + "_chunks"
}

// historyAlias names the alias that records the i-th kept version before the current one (i >= 1).
func (s *Store) historyAlias(i int, kind string) string {
	return s.name + "_prev" + strconv.Itoa(i) + "_" + kind
}

// aliasSlot parses one of this store's alias names: slot 0 for <name>_summaries and <name>_chunks, i for
// <name>_prev<i>_summaries and _chunks.
func (s *Store) aliasSlot(alias string) (slot int, kind string, ok bool) {
	switch alias {
	case s.summaries:
		return 0, "summaries", true
	case s.chunks:
		return 0, "chunks", true
	}
	rest, ok := strings.CutPrefix(alias, s.name+"_prev")
	if !ok {
		return 0, "", false
	}
	for _, k := range []string{"summaries", "chunks"} {
		if n, ok := strings.CutSuffix(rest, "_"+k); ok {
			if i, err := strconv.Atoi(n); err == nil && i > 0 && strconv.Itoa(i) == n {
				return i, k, true
			}
		}
	}
	return 0, "", false
}

// versionOf parses a collection name of this store's versions and returns its version and kind ("summaries"
// or "chunks").
func (s *Store) versionOf(coll string) (version, kind string, ok bool) {
	rest, ok := strings.CutPrefix(coll, s.name+"_v")
	if !ok {
		return "", "", false
	}
	for _, k := range []string{"summaries", "chunks"} {
		if v, ok := strings.CutSuffix(rest, "_"+k); ok && versionRE.MatchString(v) {
			return v, k, true
		}
	}
	return "", "", false
}

// layout is what Qdrant holds for a store's name: the versions the aliases record, newest first, whether the
// unversioned collections of earlier releases are there, and every versioned collection.
type layout struct {
	// kept[0] is the version <name>_summaries points at, kept[i] the one <name>_prev<i>_summaries points at;
	// "" where an alias is missing.
	kept []string
	// aliases maps each of this store's alias names to its collection.
	aliases map[string]string
	// legacy is set when <name>_summaries or <name>_chunks is a collection rather than an alias.
	legacy map[string]bool
	// versioned lists the collections named <name>_v<version>_<kind>.
	versioned []string
}

// current is the version the aliases point at, or "".
func (l layout) current() string {
	if len(l.kept) == 0 {
		return ""
	}
	return l.kept[0]
}

func (s *Store) readLayout(ctx context.Context) (layout, error) {
	l := layout{aliases: map[string]string{}, legacy: map[string]bool{}}
	colls, err := s.client.ListCollections(ctx)
	if err != nil {
		return l, fmt.Errorf("qdrant: list collections: %w", err)
	}
	for _, c := range colls {
		switch {
		case c == s.summaries || c == s.chunks:
			l.legacy[c] = true
		default:
			if _, _, ok := s.versionOf(c); ok {
				l.versioned = append(l.versioned, c)
			}
		}
	}
	slices.Sort(l.versioned)
	aliases, err := s.client.ListAliases(ctx)
	if err != nil {
		return l, fmt.Errorf("qdrant: list aliases: %w", err)
	}
	slot := map[int]string{}
	top := -1
	for _, a := range aliases {
		name, coll := a.GetAliasName(), a.GetCollectionName()
		i, kind, ok := s.aliasSlot(name)
		if !ok {
			continue
		}
		l.aliases[name] = coll
		if kind != "summaries" {
			continue
		}
		if v, k, ok := s.versionOf(coll); ok && k == "summaries" {
			slot[i] = v
			top = max(top, i)
		}
	}
	for i := 0; i <= top; i++ {
		l.kept = append(l.kept, slot[i])
	}
	return l, nil
}

// switchAliases points <name>_summaries and <name>_chunks at version and the history aliases at the older kept
// versions, in one UpdateAliases request, so a reader of the aliases sees one version or the other. History
// aliases beyond the kept versions are removed.
func (s *Store) switchAliases(ctx context.Context, l layout, kept []string) error {
	var ops []*qdrant.AliasOperations
	set := func(alias, coll string) {
		if l.aliases[alias] == coll {
			return
		}
		if _, ok := l.aliases[alias]; ok {
			ops = append(ops, deleteAlias(alias))
		}
		ops = append(ops, &qdrant.AliasOperations{Action: &qdrant.AliasOperations_CreateAlias{
			CreateAlias: &qdrant.CreateAlias{AliasName: alias, CollectionName: coll},
		}})
	}
	want := map[string]bool{}
	for i, v := range kept {
		sum, ch := s.VersionCollections(v)
		aSum, aCh := s.summaries, s.chunks
		if i > 0 {
			aSum, aCh = s.historyAlias(i, "summaries"), s.historyAlias(i, "chunks")
		}
		set(aSum, sum)
		set(aCh, ch)
		want[aSum], want[aCh] = true, true
	}
	var stale []string
	for alias := range l.aliases {
		if !want[alias] {
			stale = append(stale, alias)
		}
	}
	slices.Sort(stale)
	for _, alias := range stale {
		ops = append(ops, deleteAlias(alias))
	}
	if len(ops) == 0 {
		return nil
	}
	if err := s.client.UpdateAliases(ctx, ops); err != nil {
		return fmt.Errorf("qdrant: switch aliases to %s: %w", kept[0], err)
	}
	return nil
}

func deleteAlias(alias string) *qdrant.AliasOperations {
	return &qdrant.AliasOperations{Action: &qdrant.AliasOperations_DeleteAlias{DeleteAlias: &qdrant.DeleteAlias{AliasName: alias}}}
}

// dropVersions deletes the versioned collections of every version not in kept, and returns those versions.
func (s *Store) dropVersions(ctx context.Context, l layout, kept []string) ([]string, error) {
	var dropped []string
	for _, c := range l.versioned {
		v, _, _ := s.versionOf(c)
		if slices.Contains(kept, v) {
			continue
		}
		if err := s.client.DeleteCollection(ctx, c); err != nil {
			return dropped, fmt.Errorf("qdrant: drop collection %s: %w", c, err)
		}
		if !slices.Contains(dropped, v) {
			dropped = append(dropped, v)
		}
	}
	return dropped, nil
}

// dropLegacy deletes the unversioned collections <name>_summaries and <name>_chunks, which must go before
// aliases of those names can be created.
func (s *Store) dropLegacy(ctx context.Context, l layout) error {
	for _, c := range []string{s.summaries, s.chunks} {
		if !l.legacy[c] {
			continue
		}
		if err := s.client.DeleteCollection(ctx, c); err != nil {
			return fmt.Errorf("qdrant: drop unversioned collection %s: %w", c, err)
		}
	}
	return nil
}

// nextKept is the kept versions after a sync of version: it first, then the previously kept ones, without
// repeats or gaps, at most keep.
func nextKept(version string, previous []string, keep int) []string {
	out := []string{version}
	for _, v := range previous {
		if len(out) == keep {
			break
		}
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// missing maps a NotFound from Qdrant on a version's collection to ErrVersionMissing.
func missing(err error, version string) error {
	if status.Code(err) == codes.NotFound {
		return fmt.Errorf("index version %s: %w: %w", version, ErrVersionMissing, err)
	}
	return err
}
