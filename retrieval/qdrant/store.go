// Package qdrant keeps ragproxy's page summaries and chunks in Qdrant, for deployments that outgrow the
// in-process vector index. Each index version gets two collections of its own, <name>_v<version>_summaries
// (one point per page) and <name>_v<version>_chunks (one point per chunk), each with a cosine dense vector
// "dense" of the embedder's dimension and a BM25 sparse vector "bm25" whose IDF Qdrant applies, so hybrid
// search (dense + BM25, fused with reciprocal rank fusion) runs inside Qdrant.
//
// Points carry the payload page_id, url, community, section and url_prefixes (indexed), so chunk search can be
// restricted to a set of pages by filter, and any search to the pages under a section assistant's URL prefixes
// (url_prefixes holds retrieval.ScopeKeys of the page's URL, matched by a keyword filter). Point ids are derived from page URLs, which survive re-ingests; page ids are
// positions in the index version, set on each version's points.
//
// Versions: ingest fills a new version's collections (copying unchanged pages from the version before), then
// switches the aliases <name>_summaries and <name>_chunks to it in one request; a server searches the
// collections of the version it loaded (NewSearcher), never the aliases, so a server one version behind keeps
// reading its own version. Sync keeps the collections of the newest Config.KeepVersions versions (default 2:
// current and previous, as the index directory keeps on disk) and drops older ones; a server still on a dropped
// version gets ErrVersionMissing until it loads the current index. The kept versions, newest first, are recorded
// in aliases too: <name>_prev1_summaries names the previous version, and so on.
//
// A Store is safe for concurrent use.
package qdrant

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
)

// Vector names inside both collections.
const (
	DenseVector  = "dense"
	SparseVector = "bm25"
)

// Payload keys.
const (
	keyPageID      = "page_id"
	keyURL         = "url"
	keyCommunity   = "community"
	keySection     = "section"
	keyPrefixes    = "url_prefixes" // retrieval.ScopeKeys of the page's URL, for section assistants' filters
	keyTitle       = "title"
	keyOrd         = "ord"
	keyChunks      = "chunks"
	keyFingerprint = "fingerprint"
)

// ErrDimension is returned when an existing collection's dense vectors have another dimension than the index.
var ErrDimension = errors.New("qdrant: collection dimension differs from the index's")

// Config configures a Store.
type Config struct {
	// URL is Qdrant's gRPC endpoint: http://host:port, or https:// for TLS. Default http://localhost:6334; a URL
	// without a port uses 6334 (Qdrant's gRPC port; 6333 is its REST port).
	URL string
	// APIKey is sent as Qdrant's api-key header when set.
	APIKey string
	// Name prefixes the collections: <Name>_v<version>_summaries and _chunks, and the aliases <Name>_summaries
	// and <Name>_chunks. Default "ragproxy".
	Name string
	// KeepVersions is the number of index versions whose collections Sync keeps: the one it syncs and the
	// newest ones before it. Default 2 (current and previous); a server more versions behind loses its
	// collections.
	KeepVersions int
	// BatchSize is the number of points per upsert request and of operations per batch update. Default 256.
	BatchSize int
	// Sparse encodes a document into BM25 term weights. Default: the in-process BM25's
	// (lexical.Config.SparseDocument); queries must be encoded to match (lexical.Config.SparseQuery for the
	// default).
	Sparse SparseEncoder
	// RRFK is reciprocal rank fusion's k. Default 0: the server's default, sent as the plain RRF fusion that
	// every Qdrant version with the query API understands.
	RRFK uint32
	// DialOptions are added to the gRPC dial options.
	DialOptions []grpc.DialOption
}

// Redacted returns the config with the API key hidden, for logging.
func (c Config) Redacted() Config {
	if c.APIKey != "" {
		c.APIKey = "xxxxx"
	}
	return c
}

// Store reads and writes the collections of one index name on a Qdrant server.
type Store struct {
	client *qdrant.Client
	name   string
	// summaries and chunks are the aliases naming the current version.
	summaries string
	chunks    string
	keep      int
	batch     int
	sparse    SparseEncoder
	rrfK      uint32
}

// New connects to the Qdrant server cfg.URL names. gRPC connects lazily, so an unreachable server shows on the
// first call.
func New(cfg Config) (*Store, error) {
	host, port, tls, err := parseURL(cfg.URL)
	if err != nil {
		return nil, err
	}
	client, err := qdrant.NewClient(&qdrant.Config{
		Host:                   host,
		Port:                   port,
		APIKey:                 cfg.APIKey,
		UseTLS:                 tls,
		GrpcOptions:            cfg.DialOptions,
		SkipCompatibilityCheck: true, // the check makes a blocking call at construction; Health reports it instead
		PoolSize:               1,
	})
	if err != nil {
		return nil, fmt.Errorf("qdrant: connect %s: %w", cfg.URL, err)
	}
	name := cfg.Name
	if name == "" {
		name = "ragproxy"
	}
	batch := cfg.BatchSize
	if batch <= 0 {
		batch = 256
	}
	sparse := cfg.Sparse
	if sparse == nil {
		sparse = documentVector
	}
	keep := cfg.KeepVersions
	if keep <= 0 {
		keep = 2
	}
	return &Store{
		client:    client,
		name:      name,
		keep:      keep,
		summaries: name + "_summaries",
		chunks:    name + "_chunks",
		batch:     batch,
		sparse:    sparse,
		rrfK:      cfg.RRFK,
	}, nil
}

func parseURL(raw string) (host string, port int, tls bool, err error) {
	if raw == "" {
		raw = "http://localhost:6334"
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", 0, false, fmt.Errorf("qdrant: parse url: %w", err)
	}
	switch u.Scheme {
	case "http", "grpc":
	case "https", "grpcs":
		tls = true
	default:
		return "", 0, false, fmt.Errorf("qdrant: parse url %q: scheme must be http or https", u.Redacted())
	}
	host, port = u.Hostname(), 6334
	if host == "" {
		return "", 0, false, fmt.Errorf("qdrant: parse url %q: no host", u.Redacted())
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return "", 0, false, fmt.Errorf("qdrant: parse url: port %q: %w", p, err)
		}
	}
	return host, port, tls, nil
}

// Collections returns the names of the aliases that point at the current version's summaries and chunks
// collections; Store's own searches use them.
func (s *Store) Collections() (summaries, chunks string) {
	return s.summaries, s.chunks
}

// Health returns the server's version.
func (s *Store) Health(ctx context.Context) (string, error) {
	r, err := s.client.HealthCheck(ctx)
	if err != nil {
		return "", fmt.Errorf("qdrant: health check: %w", err)
	}
	return r.GetVersion(), nil
}

// Close closes the connection; the Store must not be used afterwards.
func (s *Store) Close() error {
	if err := s.client.Close(); err != nil {
		return fmt.Errorf("qdrant: close: %w", err)
	}
	return nil
}

// ensureCollections creates the collections with their payload indexes if they do not exist, and checks the
// dense dimension of those that do.
func (s *Store) ensureCollections(ctx context.Context, dim int, names ...string) error {
	if dim <= 0 {
		return fmt.Errorf("qdrant: ensure collections: dimension %d", dim)
	}
	for _, name := range names {
		exists, err := s.client.CollectionExists(ctx, name)
		if err != nil {
			return fmt.Errorf("qdrant: collection %s exists: %w", name, err)
		}
		if exists {
			if err := s.checkDimension(ctx, name, dim); err != nil {
				return err
			}
			continue
		}
		if err := s.client.CreateCollection(ctx, createCollection(name, dim)); err != nil {
			return fmt.Errorf("qdrant: create collection %s: %w", name, err)
		}
		for _, ix := range payloadIndexes() {
			_, err := s.client.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{
				CollectionName: name,
				Wait:           qdrant.PtrOf(true),
				FieldName:      ix.field,
				FieldType:      qdrant.PtrOf(ix.typ),
			})
			if err != nil {
				return fmt.Errorf("qdrant: create payload index %s.%s: %w", name, ix.field, err)
			}
		}
	}
	return nil
}

type payloadIndex struct {
	field string
	typ   qdrant.FieldType
}

// payloadIndexes returns the indexed payload fields of both collections.
func payloadIndexes() []payloadIndex {
	return []payloadIndex{
		{keyPageID, qdrant.FieldType_FieldTypeInteger},
		{keyURL, qdrant.FieldType_FieldTypeKeyword},
		{keyCommunity, qdrant.FieldType_FieldTypeInteger},
		{keySection, qdrant.FieldType_FieldTypeKeyword},
		{keyPrefixes, qdrant.FieldType_FieldTypeKeyword},
		{keyOrd, qdrant.FieldType_FieldTypeInteger},
	}
}

func createCollection(name string, dim int) *qdrant.CreateCollection {
	return &qdrant.CreateCollection{
		CollectionName: name,
		VectorsConfig: qdrant.NewVectorsConfigMap(map[string]*qdrant.VectorParams{
			DenseVector: {Size: uint64(dim), Distance: qdrant.Distance_Cosine},
		}),
		SparseVectorsConfig: qdrant.NewSparseVectorsConfig(map[string]*qdrant.SparseVectorParams{
			SparseVector: {Modifier: qdrant.PtrOf(qdrant.Modifier_Idf)},
		}),
	}
}

func (s *Store) checkDimension(ctx context.Context, name string, dim int) error {
	info, err := s.client.GetCollectionInfo(ctx, name)
	if err != nil {
		return fmt.Errorf("qdrant: collection %s info: %w", name, err)
	}
	params := info.GetConfig().GetParams().GetVectorsConfig().GetParamsMap().GetMap()[DenseVector]
	if params == nil {
		return fmt.Errorf("qdrant: collection %s has no %q vector: %w", name, DenseVector, ErrDimension)
	}
	if params.GetSize() != uint64(dim) {
		return fmt.Errorf("qdrant: collection %s has dimension %d, index %d: %w", name, params.GetSize(), dim, ErrDimension)
	}
	return nil
}

// DeleteCollections drops every collection of the store's name, of all versions and unversioned ones, and
// with them their aliases. Missing ones are skipped.
func (s *Store) DeleteCollections(ctx context.Context) error {
	l, err := s.readLayout(ctx)
	if err != nil {
		return err
	}
	if err := s.dropLegacy(ctx, l); err != nil {
		return err
	}
	_, err = s.dropVersions(ctx, l, nil)
	return err
}
