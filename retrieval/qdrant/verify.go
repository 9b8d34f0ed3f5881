package qdrant

import (
	"context"

	"github.com/ragproxy/ragproxy/index"
)

// Drift is how the collections differ from an index: pages they lack, pages they hold in another version
// (content, summary, settings, page id, community or section), and pages the index no longer has.
type Drift struct {
	Missing, Stale, Extra int
}

// InSync reports that the collections hold exactly the index.
func (d Drift) InSync() bool { return d == Drift{} }

// Verify compares what the summaries collection records of each page with ix, without changing anything. A
// server started on an index that Qdrant does not hold would fail its searches; Verify says so at start, with
// the counts an operator needs ("run ingest with --qdrant-url").
func (s *Store) Verify(ctx context.Context, ix *index.Index) (Drift, error) {
	var d Drift
	remote, err := s.remotePages(ctx)
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
		case r.fingerprint != fingerprint(p, settings) || r.pageID != int64(p.ID) || r.community != int64(p.Community) ||
			r.section != p.Section:
			d.Stale++
		}
		delete(remote, p.URL)
	}
	d.Extra = len(remote)
	return d, nil
}
