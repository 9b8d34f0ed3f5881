package neo4j

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval"
)

// Config configures a Store.
type Config struct {
	// URI is the server's address: neo4j://, neo4j+s://, bolt:// or bolt+s://host:port; required.
	URI string
	// User and Password authenticate with basic auth; with no User the driver connects without auth.
	User     string
	Password string
	// Database names the database; default the server's default database.
	Database string
	// BatchSize is the number of rows per UNWIND statement (one transaction each). Default 1000.
	BatchSize int
	// KeepVersions is the number of index versions whose graphs Write keeps: the one it writes and the newest
	// ones before it. Default 2 (current and previous); a server on an older version finds no pages, so its
	// pages keep the index's communities.
	KeepVersions int
}

// Redacted returns the config with the password hidden, for logging.
func (c Config) Redacted() Config {
	if c.Password != "" {
		c.Password = "xxxxx"
	}
	if u, err := url.Parse(c.URI); err == nil {
		c.URI = u.Redacted()
	}
	return c
}

// Store reads and writes the page graph on a Neo4j server.
type Store struct {
	driver neo4j.DriverWithContext
	db     string
	batch  int
	keep   int
}

// New returns a Store for cfg. The driver connects lazily; Ping checks the server.
func New(cfg Config) (*Store, error) {
	auth := neo4j.NoAuth()
	if cfg.User != "" {
		auth = neo4j.BasicAuth(cfg.User, cfg.Password, "")
	}
	driver, err := neo4j.NewDriverWithContext(cfg.URI, auth)
	if err != nil {
		return nil, fmt.Errorf("neo4j: new driver for %s: %w", cfg.Redacted().URI, err)
	}
	batch := cfg.BatchSize
	if batch <= 0 {
		batch = 1000
	}
	keep := cfg.KeepVersions
	if keep <= 0 {
		keep = 2
	}
	return &Store{driver: driver, db: cfg.Database, batch: batch, keep: keep}, nil
}

// Ping checks that the server is reachable and the credentials work.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.driver.VerifyConnectivity(ctx); err != nil {
		return fmt.Errorf("neo4j: ping: %w", err)
	}
	return nil
}

// Close closes the driver's connections.
func (s *Store) Close(ctx context.Context) error {
	if err := s.driver.Close(ctx); err != nil {
		return fmt.Errorf("neo4j: close: %w", err)
	}
	return nil
}

// WriteStats counts what Write did.
type WriteStats struct {
	// Version is the index version written; Previous the version unchanged pages were copied from, if any.
	Version, Previous string
	// PagesWritten pages were sent from the index, PagesCopied copied inside the server from Previous. Both are
	// zero when the version was the newest written already.
	PagesWritten, PagesCopied int
	// Dropped lists the versions whose graphs were deleted because they fell out of the kept versions.
	Dropped []string
}

// Write adds the graph of index version ix.Manifest.Version next to the graphs servers are reading, without
// changing those: the schema (Constraints), then WritePlan's statements, each in its own write transaction, then
// it deletes the graphs of versions beyond Config.KeepVersions and nodes without a version (releases before
// versions). Pages whose fingerprint matches the previous version are copied inside the server. When the
// version is the newest written already, nothing is written. A Write interrupted part-way leaves nodes that
// no server reads (the version is marked written last), which the next Write of that version completes, or
// the next Write of another version deletes. Write assumes one Write at a time per database.
func (s *Store) Write(ctx context.Context, ix *index.Index) (WriteStats, error) {
	version := ix.Manifest.Version
	st := WriteStats{Version: version}
	if version == "" {
		return st, errors.New("neo4j: write: the index has no version")
	}
	ix, err := ix.Whole() // the chunk nodes hold the texts
	if err != nil {
		return st, fmt.Errorf("neo4j: write: %w", err)
	}
	for _, c := range Constraints() {
		if _, err := s.run(ctx, c); err != nil {
			return st, fmt.Errorf("neo4j: schema: %w", err)
		}
	}
	versions, err := s.strings(ctx, VersionsQuery(), "version")
	if err != nil {
		return st, fmt.Errorf("neo4j: read versions: %w", err)
	}
	if len(versions) == 0 || versions[0] != version {
		prev := Previous{Fingerprints: map[string]string{}}
		for _, v := range versions {
			if v != version {
				prev.Version = v
				break
			}
		}
		if prev.Version != "" {
			res, err := s.run(ctx, FingerprintsQuery(prev.Version))
			if err != nil {
				return st, fmt.Errorf("neo4j: read fingerprints of %s: %w", prev.Version, err)
			}
			for _, rec := range res.Records {
				u, _, err := neo4j.GetRecordValue[string](rec, "url")
				if err != nil {
					return st, fmt.Errorf("neo4j: read fingerprints of %s: %w", prev.Version, err)
				}
				fp, _, err := neo4j.GetRecordValue[string](rec, "fingerprint")
				if err != nil {
					return st, fmt.Errorf("neo4j: read fingerprints of %s: %w", prev.Version, err)
				}
				prev.Fingerprints[u] = fp
			}
		}
		plan, copied := WritePlan(ix, prev, s.batch)
		if err := s.execute(ctx, plan); err != nil {
			return st, err
		}
		st.Previous, st.PagesCopied, st.PagesWritten = prev.Version, copied, len(ix.Pages)-copied
	}
	for {
		res, err := s.write(ctx, PruneNodes(s.keep, s.batch))
		if err != nil {
			return st, fmt.Errorf("neo4j: delete old versions: %w", err)
		}
		if n, _ := res.(int64); n < int64(s.batch) {
			break
		}
	}
	if st.Dropped, err = s.strings(ctx, PruneVersions(s.keep), "version"); err != nil {
		return st, fmt.Errorf("neo4j: delete old versions: %w", err)
	}
	return st, nil
}

// execute runs statements in order, each in its own write transaction.
func (s *Store) execute(ctx context.Context, plan []Statement) error {
	for i, st := range plan {
		if _, err := s.write(ctx, st); err != nil {
			return fmt.Errorf("neo4j: write statement %d: %w", i, err)
		}
	}
	return nil
}

// write runs one statement in a write transaction and returns the "deleted" column of its single record, if
// it has one.
func (s *Store) write(ctx context.Context, st Statement) (any, error) {
	session := s.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: s.db, AccessMode: neo4j.AccessModeWrite})
	defer session.Close(ctx)
	return session.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
		res, err := tx.Run(ctx, st.Cypher, st.Params)
		if err != nil {
			return nil, err
		}
		recs, err := res.Collect(ctx)
		if err != nil {
			return nil, err
		}
		if len(recs) == 1 {
			if v, ok := recs[0].Get("deleted"); ok {
				return v, nil
			}
		}
		return nil, nil
	})
}

func (s *Store) run(ctx context.Context, st Statement) (*neo4j.EagerResult, error) {
	return neo4j.ExecuteQuery(ctx, s.driver, st.Cypher, st.Params, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase(s.db))
}

// strings runs a statement and returns one string column of its records.
func (s *Store) strings(ctx context.Context, st Statement, column string) ([]string, error) {
	res, err := s.run(ctx, st)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(res.Records))
	for _, rec := range res.Records {
		v, _, err := neo4j.GetRecordValue[string](rec, column)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Graph reads the graph of one index version: a server opens it for the version it loaded, so it never
// reads another version's page ids.
type Graph struct {
	s       *Store
	version string
}

var _ retrieval.CommunitySource = (*Graph)(nil)

// Graph returns the graph of index version (an index's Manifest.Version).
func (s *Store) Graph(version string) *Graph { return &Graph{s: s, version: version} }

// Version returns the index version the graph reads.
func (g *Graph) Version() string { return g.version }

// Communities returns the community id of each of pageIDs that the version's graph holds; a version the
// database does not hold (not written yet, or deleted as too old) holds none.
func (g *Graph) Communities(ctx context.Context, pageIDs []int) (map[int]int, error) {
	out := make(map[int]int, len(pageIDs))
	if len(pageIDs) == 0 {
		return out, nil
	}
	st := CommunitiesQuery(g.version, pageIDs)
	res, err := neo4j.ExecuteQuery(ctx, g.s.driver, st.Cypher, st.Params, neo4j.EagerResultTransformer, g.s.dbOption(), neo4j.ExecuteQueryWithReadersRouting())
	if err != nil {
		return nil, fmt.Errorf("neo4j: communities: %w", err)
	}
	for _, rec := range res.Records {
		id, _, err := neo4j.GetRecordValue[int64](rec, "page_id")
		if err != nil {
			return nil, fmt.Errorf("neo4j: communities: page_id: %w", err)
		}
		community, isNil, err := neo4j.GetRecordValue[int64](rec, "community_id")
		if err != nil {
			return nil, fmt.Errorf("neo4j: communities: community_id of page %d: %w", id, err)
		}
		if !isNil { // a page written without a community is left out, as if unknown
			out[int(id)] = int(community)
		}
	}
	return out, nil
}

// Neighbours returns the ids of the pages linked to or from pageID in the version's graph, ascending.
func (g *Graph) Neighbours(ctx context.Context, pageID int) ([]int, error) {
	st := NeighboursQuery(g.version, pageID)
	res, err := neo4j.ExecuteQuery(ctx, g.s.driver, st.Cypher, st.Params, neo4j.EagerResultTransformer, g.s.dbOption(), neo4j.ExecuteQueryWithReadersRouting())
	if err != nil {
		return nil, fmt.Errorf("neo4j: neighbours of %d: %w", pageID, err)
	}
	var out []int
	for _, rec := range res.Records {
		id, isNil, err := neo4j.GetRecordValue[int64](rec, "page_id")
		if err != nil {
			return nil, fmt.Errorf("neo4j: neighbours of %d: %w", pageID, err)
		}
		if !isNil {
			out = append(out, int(id))
		}
	}
	return out, nil
}

func (s *Store) dbOption() neo4j.ExecuteQueryConfigurationOption {
	return neo4j.ExecuteQueryWithDatabase(s.db)
}
