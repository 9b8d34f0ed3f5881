package qdrant

import (
	"context"
	"fmt"

	"github.com/ragproxy/ragproxy/index"
)

// Drift is how the collections differ from an index: pages they lack, pages they hold in another version
// (content, summary, settings, page id, community, section or url_prefixes), and pages the index no longer has.
type Drift struct {
	Missing, Stale, Extra int
	// Unlabelled counts the pages whose points an earlier release wrote, without url_prefixes: searches find
	// them, but not a section assistant's, which filter on it. The next Sync sets it in place.
	Unlabelled int
}

// InSync reports that the collections hold exactly the index; pages without url_prefixes count as held.
func (d Drift) InSync() bool { return d.Missing == 0 && d.Stale == 0 && d.Extra == 0 }

// Verify compares what the summaries collection of version ix.Manifest.Version records of each page with ix,
// without changing anything; ErrVersionMissing when that version has no collections. A server started on an
// index that Qdrant does not hold would fail its searches; Verify says so at start, with the counts an operator
// needs ("run ingest with --qdrant-url").
func (s *Store) Verify(ctx context.Context, ix *index.Index) (Drift, error) {
	if err := checkVersion(ix.Manifest.Version); err != nil {
		return Drift{}, fmt.Errorf("qdrant: verify: %w", err)
	}
	sum, _ := s.VersionCollections(ix.Manifest.Version)
	d, err := s.verify(ctx, sum, ix)
	return d, missing(err, ix.Manifest.Version)
}

// verify is Verify on a summaries collection.
func (s *Store) verify(ctx context.Context, coll string, ix *index.Index) (Drift, error) {
	var d Drift
	remote, err := s.remotePages(ctx, coll)
	if err != nil {
		return d, err
	}
	settings := settingsDigest(ix)
	for i := range ix.Pages {
		p := &ix.Pages[i]
		r, ok := remote[p.URL]
		switch {
		case !ok:
			d.Missing++
		case r.fingerprint != fingerprint(p, settings) || !r.sameLabels(p):
			d.Stale++
		case r.unlabelled:
			d.Unlabelled++
		}
		delete(remote, p.URL)
	}
	d.Extra = len(remote)
	return d, nil
}
