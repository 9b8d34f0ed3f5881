package examples

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/ingest"
)

// EnsureIndex ingests the example site into dir unless an index of it built by this version of ragproxy is
// already there (or rebuild is set). The report is nil when the index was kept; logger sees why a stale one is
// rebuilt.
func EnsureIndex(ctx context.Context, dir, version string, rebuild bool, logger *slog.Logger) (*ingest.Report, error) {
	m, err := index.LoadManifest(dir)
	switch {
	case err == nil && !rebuild && m.RagproxyVersion == version && m.Source == BaseURL:
		return nil, nil
	case err != nil && !errors.Is(err, index.ErrNoIndex):
		logger.Warn("rebuilding the example index", "index", dir, "err", err)
	}
	site, err := os.MkdirTemp("", "ragproxy-demo-site-")
	if err != nil {
		return nil, fmt.Errorf("example index: %w", err)
	}
	defer os.RemoveAll(site)
	sub, err := fs.Sub(Site, "site")
	if err != nil {
		return nil, fmt.Errorf("example index: %w", err)
	}
	if err := os.CopyFS(site, sub); err != nil {
		return nil, fmt.Errorf("example index: %w", err)
	}
	rep, err := ingest.Run(ctx, ingest.Config{Source: site, BaseURL: BaseURL, IndexDir: dir, Full: rebuild,
		Version: version, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("example index: %w", err)
	}
	return rep, nil
}
