package neo4j

import (
	"context"
	"fmt"
	"net/url"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/ragproxy/ragproxy/index"
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
	return &Store{driver: driver, db: cfg.Database, batch: batch}, nil
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

// Write makes the graph match ix: uniqueness constraints, then WritePlan's statements, each in its own write
// transaction. A Write interrupted part-way leaves a graph that the next Write completes; readers may see the
// mix in between, so a re-ingest should finish its Write before the new index version goes live.
func (s *Store) Write(ctx context.Context, ix *index.Index) error {
	for _, st := range Constraints() {
		if _, err := neo4j.ExecuteQuery(ctx, s.driver, st.Cypher, st.Params, neo4j.EagerResultTransformer, s.dbOption()); err != nil {
			return fmt.Errorf("neo4j: create constraint: %w", err)
		}
	}
	session := s.driver.NewSession(ctx, neo4j.SessionConfig{DatabaseName: s.db, AccessMode: neo4j.AccessModeWrite})
	defer session.Close(ctx)
	for i, st := range WritePlan(ix, s.batch) {
		_, err := session.ExecuteWrite(ctx, func(tx neo4j.ManagedTransaction) (any, error) {
			res, err := tx.Run(ctx, st.Cypher, st.Params)
			if err != nil {
				return nil, err
			}
			return res.Consume(ctx)
		})
		if err != nil {
			return fmt.Errorf("neo4j: write statement %d: %w", i, err)
		}
	}
	return nil
}

// Communities returns the community id of each of pageIDs that the graph holds.
func (s *Store) Communities(ctx context.Context, pageIDs []int) (map[int]int, error) {
	out := make(map[int]int, len(pageIDs))
	if len(pageIDs) == 0 {
		return out, nil
	}
	st := CommunitiesQuery(pageIDs)
	res, err := neo4j.ExecuteQuery(ctx, s.driver, st.Cypher, st.Params, neo4j.EagerResultTransformer, s.dbOption(), neo4j.ExecuteQueryWithReadersRouting())
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

// Neighbours returns the ids of the pages linked to or from pageID, ascending.
func (s *Store) Neighbours(ctx context.Context, pageID int) ([]int, error) {
	st := NeighboursQuery(pageID)
	res, err := neo4j.ExecuteQuery(ctx, s.driver, st.Cypher, st.Params, neo4j.EagerResultTransformer, s.dbOption(), neo4j.ExecuteQueryWithReadersRouting())
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
