// Package qdranttest serves an in-memory Qdrant over real gRPC for tests: the official client talks to it through
// the client's generated service interfaces, so tests exercise the real wire protocol without a Qdrant server.
// A Server is safe for concurrent use.
package qdranttest

import (
	"context"
	"net"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Server is an in-memory Qdrant speaking the real gRPC protocol through the client's generated service
// interfaces. It implements the subset ragproxy uses, with Qdrant's behaviour: named dense vectors with cosine
// distance, sparse vectors with the IDF modifier, payload filters (match keyword / integer / any, on single values and arrays, range,
// nested filters), payload set and deleted by key, scroll with offsets and vectors, hybrid query with prefetch and RRF fusion, batch updates,
// collection listing and aliases (created, deleted and switched atomically in one request, resolved by every
// point and collection read, removed with their collection). Anything else fails with Unimplemented, so an
// adapter change that relies on more shows up in the tests.
type Server struct {
	mu       sync.Mutex
	colls    map[string]*fakeCollection
	aliases  map[string]string // alias -> collection
	calls    map[string]int    // RPC name -> number of calls
	upserted map[string]int    // collection -> points received by Upsert and batch upserts
}

type fakeCollection struct {
	dense   map[string]uint64 // vector name -> dimension (all cosine)
	sparse  map[string]bool   // sparse vector name -> IDF modifier
	indexes map[string]qdrant.FieldType
	points  map[string]*fakePoint // by idKey
}

type fakePoint struct {
	id      *qdrant.PointId
	payload map[string]*qdrant.Value
	dense   map[string][]float32
	sparse  map[string]*qdrant.SparseVector
}

// NewServer serves a Server on a loopback port for the test's lifetime and returns it with its URL, ready
// for qdrant.Config.URL.
func NewServer(tb testing.TB) (*Server, string) {
	tb.Helper()
	f := &Server{colls: map[string]*fakeCollection{}, aliases: map[string]string{}, calls: map[string]int{}, upserted: map[string]int{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(256 << 20))
	qdrant.RegisterQdrantServer(srv, fakeHealth{f: f})
	qdrant.RegisterCollectionsServer(srv, fakeCollections{f: f})
	qdrant.RegisterPointsServer(srv, fakePoints{f: f})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	tb.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return f, "http://" + l.Addr().String()
}

// Count returns how many calls of the RPC (Upsert, UpdateBatch, Query, Scroll, ...) the server has answered.
func (f *Server) Count(rpc string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[rpc]
}

// Upserted returns how many points upserts have written into the collection (named as the requests named it,
// alias or collection) since the server started.
func (f *Server) Upserted(collection string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.upserted[collection]
}

// Collections returns the names of the collections, sorted; aliases are not collections.
func (f *Server) Collections() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	names := make([]string, 0, len(f.colls))
	for n := range f.colls {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Aliases returns a copy of the aliases: alias name -> collection name.
func (f *Server) Aliases() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]string, len(f.aliases))
	for a, c := range f.aliases {
		out[a] = c
	}
	return out
}

// Collection is a copy of what the server holds for one collection.
type Collection struct {
	// Dense maps each dense vector name to its dimension (all cosine).
	Dense map[string]uint64
	// Sparse maps each sparse vector name to whether it has the IDF modifier.
	Sparse map[string]bool
	// Indexes maps each indexed payload field to its type.
	Indexes map[string]qdrant.FieldType
	// Payloads holds each point's payload, in point id order.
	Payloads []map[string]*qdrant.Value
	// Vectors holds each point's dense vectors by name, in the order of Payloads.
	Vectors []map[string][]float32
}

// Collection returns a copy of the named collection (or of the one an alias of that name points at), and false
// when it does not exist.
func (f *Server) Collection(name string) (Collection, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, err := f.coll(name)
	if err != nil {
		return Collection{}, false
	}
	out := Collection{Dense: map[string]uint64{}, Sparse: map[string]bool{}, Indexes: map[string]qdrant.FieldType{}}
	for k, v := range c.dense {
		out.Dense[k] = v
	}
	for k, v := range c.sparse {
		out.Sparse[k] = v
	}
	for k, v := range c.indexes {
		out.Indexes[k] = v
	}
	keys := make([]string, 0, len(c.points))
	for k := range c.points {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		pl := make(map[string]*qdrant.Value, len(c.points[k].payload))
		for name, v := range c.points[k].payload {
			pl[name] = proto.Clone(v).(*qdrant.Value)
		}
		out.Payloads = append(out.Payloads, pl)
		dense := map[string][]float32{}
		for name, v := range c.points[k].dense {
			dense[name] = slices.Clone(v)
		}
		out.Vectors = append(out.Vectors, dense)
	}
	return out, true
}

// lock takes the lock and records the call; the caller unlocks.
func (f *Server) lock(rpc string) {
	f.mu.Lock()
	f.calls[rpc]++
}

// coll resolves a collection name or alias, as Qdrant does for every read and write of points.
func (f *Server) coll(name string) (*fakeCollection, error) {
	if target, ok := f.aliases[name]; ok {
		name = target
	}
	c, ok := f.colls[name]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "Collection `%s` doesn't exist!", name)
	}
	return c, nil
}

type fakeHealth struct {
	qdrant.UnimplementedQdrantServer
	f *Server
}

func (h fakeHealth) HealthCheck(context.Context, *qdrant.HealthCheckRequest) (*qdrant.HealthCheckReply, error) {
	return &qdrant.HealthCheckReply{Title: "qdrant - vector search engine (test)", Version: "1.17.0"}, nil
}

type fakeCollections struct {
	qdrant.UnimplementedCollectionsServer
	f *Server
}

func (s fakeCollections) CollectionExists(_ context.Context, r *qdrant.CollectionExistsRequest) (*qdrant.CollectionExistsResponse, error) {
	s.f.lock("CollectionExists")
	defer s.f.mu.Unlock()
	_, err := s.f.coll(r.GetCollectionName())
	return &qdrant.CollectionExistsResponse{Result: &qdrant.CollectionExists{Exists: err == nil}}, nil
}

func (s fakeCollections) List(context.Context, *qdrant.ListCollectionsRequest) (*qdrant.ListCollectionsResponse, error) {
	s.f.lock("List")
	defer s.f.mu.Unlock()
	res := &qdrant.ListCollectionsResponse{}
	for name := range s.f.colls {
		res.Collections = append(res.Collections, &qdrant.CollectionDescription{Name: name})
	}
	sort.Slice(res.Collections, func(i, j int) bool { return res.Collections[i].Name < res.Collections[j].Name })
	return res, nil
}

func (s fakeCollections) ListAliases(context.Context, *qdrant.ListAliasesRequest) (*qdrant.ListAliasesResponse, error) {
	s.f.lock("ListAliases")
	defer s.f.mu.Unlock()
	res := &qdrant.ListAliasesResponse{}
	for a, c := range s.f.aliases {
		res.Aliases = append(res.Aliases, &qdrant.AliasDescription{AliasName: a, CollectionName: c})
	}
	sort.Slice(res.Aliases, func(i, j int) bool { return res.Aliases[i].AliasName < res.Aliases[j].AliasName })
	return res, nil
}

func (s fakeCollections) ListCollectionAliases(_ context.Context, r *qdrant.ListCollectionAliasesRequest) (*qdrant.ListAliasesResponse, error) {
	s.f.lock("ListCollectionAliases")
	defer s.f.mu.Unlock()
	if _, ok := s.f.colls[r.GetCollectionName()]; !ok {
		return nil, status.Errorf(codes.NotFound, "Collection `%s` doesn't exist!", r.GetCollectionName())
	}
	res := &qdrant.ListAliasesResponse{}
	for a, c := range s.f.aliases {
		if c == r.GetCollectionName() {
			res.Aliases = append(res.Aliases, &qdrant.AliasDescription{AliasName: a, CollectionName: c})
		}
	}
	sort.Slice(res.Aliases, func(i, j int) bool { return res.Aliases[i].AliasName < res.Aliases[j].AliasName })
	return res, nil
}

// UpdateAliases applies the actions in order, all or none, as Qdrant does: an alias may not take the name of a
// collection, must name an existing collection, and creating one that exists repoints it; deleting or
// renaming a missing alias fails.
func (s fakeCollections) UpdateAliases(_ context.Context, r *qdrant.ChangeAliases) (*qdrant.CollectionOperationResponse, error) {
	s.f.lock("UpdateAliases")
	defer s.f.mu.Unlock()
	next := make(map[string]string, len(s.f.aliases))
	for a, c := range s.f.aliases {
		next[a] = c
	}
	for _, op := range r.GetActions() {
		switch a := op.GetAction().(type) {
		case *qdrant.AliasOperations_CreateAlias:
			name, coll := a.CreateAlias.GetAliasName(), a.CreateAlias.GetCollectionName()
			if _, ok := s.f.colls[name]; ok {
				return nil, status.Errorf(codes.AlreadyExists, "Wrong input: Collection `%s` already exists!", name)
			}
			if _, ok := s.f.colls[coll]; !ok {
				return nil, status.Errorf(codes.NotFound, "Collection `%s` doesn't exist!", coll)
			}
			next[name] = coll
		case *qdrant.AliasOperations_DeleteAlias:
			name := a.DeleteAlias.GetAliasName()
			if _, ok := next[name]; !ok {
				return nil, status.Errorf(codes.NotFound, "Alias `%s` doesn't exist!", name)
			}
			delete(next, name)
		case *qdrant.AliasOperations_RenameAlias:
			old, name := a.RenameAlias.GetOldAliasName(), a.RenameAlias.GetNewAliasName()
			coll, ok := next[old]
			if !ok {
				return nil, status.Errorf(codes.NotFound, "Alias `%s` doesn't exist!", old)
			}
			delete(next, old)
			next[name] = coll
		default:
			return nil, status.Errorf(codes.InvalidArgument, "alias action %T", a)
		}
	}
	s.f.aliases = next
	return &qdrant.CollectionOperationResponse{Result: true}, nil
}

func (s fakeCollections) Create(_ context.Context, r *qdrant.CreateCollection) (*qdrant.CollectionOperationResponse, error) {
	s.f.lock("Create")
	defer s.f.mu.Unlock()
	if _, ok := s.f.colls[r.GetCollectionName()]; ok {
		return nil, status.Errorf(codes.AlreadyExists, "Collection `%s` already exists!", r.GetCollectionName())
	}
	if _, ok := s.f.aliases[r.GetCollectionName()]; ok {
		return nil, status.Errorf(codes.InvalidArgument, "Wrong input: Can't create collection with name %s. Alias with the same name already exists", r.GetCollectionName())
	}
	c := &fakeCollection{dense: map[string]uint64{}, sparse: map[string]bool{}, indexes: map[string]qdrant.FieldType{}, points: map[string]*fakePoint{}}
	params := r.GetVectorsConfig().GetParamsMap().GetMap()
	if len(params) == 0 {
		return nil, status.Error(codes.Unimplemented, "fake: only named dense vectors are supported")
	}
	for name, p := range params {
		if p.GetDistance() != qdrant.Distance_Cosine || p.GetSize() == 0 {
			return nil, status.Errorf(codes.Unimplemented, "fake: vector %q: only cosine with a size", name)
		}
		c.dense[name] = p.GetSize()
	}
	for name, p := range r.GetSparseVectorsConfig().GetMap() {
		c.sparse[name] = p.GetModifier() == qdrant.Modifier_Idf
	}
	s.f.colls[r.GetCollectionName()] = c
	return &qdrant.CollectionOperationResponse{Result: true}, nil
}

func (s fakeCollections) Get(_ context.Context, r *qdrant.GetCollectionInfoRequest) (*qdrant.GetCollectionInfoResponse, error) {
	s.f.lock("Get")
	defer s.f.mu.Unlock()
	c, err := s.f.coll(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	params := map[string]*qdrant.VectorParams{}
	for name, dim := range c.dense {
		params[name] = &qdrant.VectorParams{Size: dim, Distance: qdrant.Distance_Cosine}
	}
	n := uint64(len(c.points))
	return &qdrant.GetCollectionInfoResponse{Result: &qdrant.CollectionInfo{
		Status:      qdrant.CollectionStatus_Green,
		PointsCount: &n,
		Config:      &qdrant.CollectionConfig{Params: &qdrant.CollectionParams{VectorsConfig: qdrant.NewVectorsConfigMap(params)}},
	}}, nil
}

func (s fakeCollections) Delete(_ context.Context, r *qdrant.DeleteCollection) (*qdrant.CollectionOperationResponse, error) {
	s.f.lock("DeleteCollection")
	defer s.f.mu.Unlock()
	_, ok := s.f.colls[r.GetCollectionName()]
	delete(s.f.colls, r.GetCollectionName())
	for a, c := range s.f.aliases { // Qdrant drops a collection's aliases with it
		if c == r.GetCollectionName() {
			delete(s.f.aliases, a)
		}
	}
	return &qdrant.CollectionOperationResponse{Result: ok}, nil
}

type fakePoints struct {
	qdrant.UnimplementedPointsServer
	f *Server
}

func completed() *qdrant.PointsOperationResponse {
	return &qdrant.PointsOperationResponse{Result: &qdrant.UpdateResult{Status: qdrant.UpdateStatus_Completed}}
}

func (s fakePoints) CreateFieldIndex(_ context.Context, r *qdrant.CreateFieldIndexCollection) (*qdrant.PointsOperationResponse, error) {
	s.f.lock("CreateFieldIndex")
	defer s.f.mu.Unlock()
	c, err := s.f.coll(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	c.indexes[r.GetFieldName()] = r.GetFieldType()
	return completed(), nil
}

func (s fakePoints) Upsert(_ context.Context, r *qdrant.UpsertPoints) (*qdrant.PointsOperationResponse, error) {
	s.f.lock("Upsert")
	defer s.f.mu.Unlock()
	c, err := s.f.coll(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	if err := c.upsert(r.GetPoints()); err != nil {
		return nil, err
	}
	s.f.upserted[r.GetCollectionName()] += len(r.GetPoints())
	return completed(), nil
}

func (s fakePoints) Delete(_ context.Context, r *qdrant.DeletePoints) (*qdrant.PointsOperationResponse, error) {
	s.f.lock("Delete")
	defer s.f.mu.Unlock()
	c, err := s.f.coll(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	if err := c.delete(r.GetPoints()); err != nil {
		return nil, err
	}
	return completed(), nil
}

func (s fakePoints) SetPayload(_ context.Context, r *qdrant.SetPayloadPoints) (*qdrant.PointsOperationResponse, error) {
	s.f.lock("SetPayload")
	defer s.f.mu.Unlock()
	c, err := s.f.coll(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	if err := c.setPayload(r.GetPayload(), r.GetPointsSelector()); err != nil {
		return nil, err
	}
	return completed(), nil
}

func (s fakePoints) DeletePayload(_ context.Context, r *qdrant.DeletePayloadPoints) (*qdrant.PointsOperationResponse, error) {
	s.f.lock("DeletePayload")
	defer s.f.mu.Unlock()
	c, err := s.f.coll(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	if err := c.deletePayload(r.GetKeys(), r.GetPointsSelector()); err != nil {
		return nil, err
	}
	return completed(), nil
}

func (s fakePoints) UpdateBatch(_ context.Context, r *qdrant.UpdateBatchPoints) (*qdrant.UpdateBatchResponse, error) {
	s.f.lock("UpdateBatch")
	defer s.f.mu.Unlock()
	c, err := s.f.coll(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	res := &qdrant.UpdateBatchResponse{}
	for _, op := range r.GetOperations() {
		switch o := op.GetOperation().(type) {
		case *qdrant.PointsUpdateOperation_Upsert:
			err = c.upsert(o.Upsert.GetPoints())
			s.f.upserted[r.GetCollectionName()] += len(o.Upsert.GetPoints())
		case *qdrant.PointsUpdateOperation_DeletePoints_:
			err = c.delete(o.DeletePoints.GetPoints())
		case *qdrant.PointsUpdateOperation_SetPayload_:
			err = c.setPayload(o.SetPayload.GetPayload(), o.SetPayload.GetPointsSelector())
		case *qdrant.PointsUpdateOperation_DeletePayload_:
			err = c.deletePayload(o.DeletePayload.GetKeys(), o.DeletePayload.GetPointsSelector())
		default:
			err = status.Errorf(codes.Unimplemented, "fake: batch operation %T", o)
		}
		if err != nil {
			return nil, err
		}
		res.Result = append(res.Result, &qdrant.UpdateResult{Status: qdrant.UpdateStatus_Completed})
	}
	return res, nil
}

func (s fakePoints) Scroll(_ context.Context, r *qdrant.ScrollPoints) (*qdrant.ScrollResponse, error) {
	s.f.lock("Scroll")
	defer s.f.mu.Unlock()
	c, err := s.f.coll(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(c.points))
	for k := range c.points {
		keys = append(keys, k)
	}
	sort.Strings(keys) // Qdrant scrolls in id order
	limit := int(r.GetLimit())
	if limit == 0 {
		limit = 10
	}
	res := &qdrant.ScrollResponse{}
	for _, k := range keys {
		if r.Offset != nil && k < idKey(r.GetOffset()) {
			continue
		}
		p := c.points[k]
		ok, err := matches(r.GetFilter(), p.payload)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if len(res.Result) == limit {
			res.NextPageOffset = p.id
			break
		}
		vectors, err := selectVectors(r.GetWithVectors(), p)
		if err != nil {
			return nil, err
		}
		res.Result = append(res.Result, &qdrant.RetrievedPoint{Id: p.id, Payload: selectPayload(r.GetWithPayload(), p.payload), Vectors: vectors})
	}
	return res, nil
}

func (s fakePoints) Query(_ context.Context, r *qdrant.QueryPoints) (*qdrant.QueryResponse, error) {
	s.f.lock("Query")
	defer s.f.mu.Unlock()
	return s.query(r)
}

// QueryBatch answers its queries in order, as Query would each, in one request.
func (s fakePoints) QueryBatch(_ context.Context, r *qdrant.QueryBatchPoints) (*qdrant.QueryBatchResponse, error) {
	s.f.lock("QueryBatch")
	defer s.f.mu.Unlock()
	res := &qdrant.QueryBatchResponse{}
	for _, q := range r.GetQueryPoints() {
		if q.GetCollectionName() != r.GetCollectionName() {
			return nil, status.Error(codes.InvalidArgument, "fake: a batch query names another collection")
		}
		one, err := s.query(q)
		if err != nil {
			return nil, err
		}
		res.Result = append(res.Result, &qdrant.BatchResult{Result: one.GetResult()})
	}
	return res, nil
}

// query answers one query; the caller holds the lock.
func (s fakePoints) query(r *qdrant.QueryPoints) (*qdrant.QueryResponse, error) {
	c, err := s.f.coll(r.GetCollectionName())
	if err != nil {
		return nil, err
	}
	var scored []scoredKey
	limit := int(r.GetLimit())
	if limit == 0 {
		limit = 10
	}
	switch q := r.GetQuery().GetVariant().(type) {
	case *qdrant.Query_Fusion, *qdrant.Query_Rrf:
		k := 2.0 // Qdrant's default RRF k
		if f, ok := q.(*qdrant.Query_Fusion); ok && f.Fusion != qdrant.Fusion_RRF {
			return nil, status.Error(codes.Unimplemented, "fake: only RRF fusion")
		}
		if rq, ok := q.(*qdrant.Query_Rrf); ok && rq.Rrf.K != nil {
			k = float64(rq.Rrf.GetK())
		}
		if len(r.GetPrefetch()) == 0 {
			return nil, status.Error(codes.InvalidArgument, "fusion needs prefetch queries")
		}
		fused := map[string]float64{}
		for _, pf := range r.GetPrefetch() {
			if len(pf.GetPrefetch()) > 0 {
				return nil, status.Error(codes.Unimplemented, "fake: nested prefetch")
			}
			list, err := c.nearest(pf.GetQuery(), pf.GetUsing(), pf.GetFilter(), int(pf.GetLimit()))
			if err != nil {
				return nil, err
			}
			for rank, sk := range list {
				fused[sk.key] += 1 / (float64(rank) + k)
			}
		}
		for key, score := range fused {
			ok, err := matches(r.GetFilter(), c.points[key].payload)
			if err != nil {
				return nil, err
			}
			if ok {
				scored = append(scored, scoredKey{key, score})
			}
		}
		sortScored(scored)
		if len(scored) > limit {
			scored = scored[:limit]
		}
	case *qdrant.Query_Nearest:
		if scored, err = c.nearest(r.GetQuery(), r.GetUsing(), r.GetFilter(), limit); err != nil {
			return nil, err
		}
	default:
		return nil, status.Errorf(codes.Unimplemented, "fake: query %T", q)
	}
	res := &qdrant.QueryResponse{}
	for _, sk := range scored {
		p := c.points[sk.key]
		res.Result = append(res.Result, &qdrant.ScoredPoint{Id: p.id, Score: float32(sk.score), Payload: selectPayload(r.GetWithPayload(), p.payload)})
	}
	return res, nil
}
