package qdrant

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/google/uuid"
	"github.com/qdrant/go-client/qdrant"

	"github.com/ragproxy/ragproxy/index"
	"github.com/ragproxy/ragproxy/retrieval"
)

// pointNamespace scopes the name-based UUIDs of points.
var pointNamespace = uuid.MustParse("3c1b5c0e-8f0d-4c53-9d8e-6b0a3f2d7e41")

// SyncStats counts what Sync did.
type SyncStats struct {
	// Version is the index version synced.
	Version string
	// Previous is the version the aliases named before the sync; "" when there was none (a first sync, or one
	// that migrated unversioned collections).
	Previous string
	// PagesWritten is the number of pages whose summary and chunks were written from the index: pages that are
	// new or changed since Previous (content, summary, embedder or ingest settings).
	PagesWritten int
	// ChunksWritten is the number of chunk points written from the index.
	ChunksWritten int
	// PagesCopied is the number of unchanged pages whose points were copied from Previous's collections
	// (vectors and payload, with the new labels), and ChunksCopied the number of their chunk points.
	PagesCopied  int
	ChunksCopied int
	// PagesRelabelled is the number of copied pages whose page_id, community, section or url_prefixes differs
	// from Previous, plus the pages of the synced version's own collections whose labels were set in place
	// (without rewriting their vectors), such as points written before url_prefixes existed.
	PagesRelabelled int
	// PagesDeleted is the number of pages of the source collections the index no longer has.
	PagesDeleted int
	// Migrated reports that unversioned collections of an earlier release were copied from and deleted.
	Migrated bool
	// Dropped lists the versions whose collections were deleted because they fell out of the kept versions.
	Dropped []string
}

// remotePage is what the summaries collection records about a page.
type remotePage struct {
	fingerprint string
	pageID      int64
	community   int64
	section     string
	prefixes    []string
	// unlabelled is set when the point has no url_prefixes: an earlier release wrote it.
	unlabelled bool
	chunks     int64
}

// sameLabels reports whether the point records the page's current labels. A point without url_prefixes (an
// earlier release's) is not stale: searches that do not filter on it find it as before (see current).
func (r remotePage) sameLabels(p *index.Page) bool {
	return r.pageID == int64(p.ID) && r.community == int64(p.Community) && r.section == p.Section &&
		(r.unlabelled || slices.Equal(r.prefixes, retrieval.ScopeKeys(p.URL)))
}

// current reports whether the point records every label of the page, url_prefixes included; sync sets the
// labels of the others.
func (r remotePage) current(p *index.Page) bool { return !r.unlabelled && r.sameLabels(p) }

// Sync makes Qdrant serve index version ix.Manifest.Version, without changing the collections of any version
// a server may be reading:
//
//  1. It fills the version's own collections (VersionCollections). Pages whose fingerprint matches the version
//     the aliases point at (or, on the first sync after an upgrade, the unversioned collections) are copied
//     from there with their vectors, relabelled as ix numbers them; only new or changed pages are written from
//     the index. Chunks go before their page's summary point, so a summary marks a complete page, and a sync
//     interrupted part-way is completed by the next one without rewriting what it finished.
//  2. It deletes the unversioned collections, if any, whose names the aliases take.
//  3. It switches the aliases <name>_summaries and <name>_chunks to the version in one request, and records
//     the older kept versions in the aliases <name>_prev<i>_summaries and _chunks (i = 1 is the previous).
//  4. It drops the collections of every version beyond Config.KeepVersions.
//
// When the aliases already name the version, no point is written; only labels a point records wrongly are set
// in place (points of an earlier release without url_prefixes), and steps 3 and 4 tidy up. Writes wait for
// Qdrant to apply them. Sync assumes one sync at a time per Config.Name.
//
// Qdrant's API has no server-side copy of points, so a copy is a scroll and an upsert through ingest: it moves
// about as many bytes as writing the page from the index would (BenchmarkIngest's next-version case). What it
// keeps is the previous version's points exactly as they were, and it needs no vectors from the index for them.
func (s *Store) Sync(ctx context.Context, ix *index.Index) (SyncStats, error) {
	version := ix.Manifest.Version
	st := SyncStats{Version: version}
	if err := checkVersion(version); err != nil {
		return st, fmt.Errorf("qdrant: sync: %w", err)
	}
	if err := checkIndex(ix); err != nil {
		return st, err
	}
	ix, err := ix.Whole() // the sparse vectors and payloads are the texts
	if err != nil {
		return st, fmt.Errorf("qdrant: sync: %w", err)
	}
	l, err := s.readLayout(ctx)
	if err != nil {
		return st, err
	}
	st.Previous = l.current()
	if l.current() != version || len(l.legacy) > 0 {
		if err := s.fill(ctx, ix, l, &st); err != nil {
			return st, err
		}
		if err := s.dropLegacy(ctx, l); err != nil {
			return st, err
		}
		st.Migrated = len(l.legacy) > 0
	} else if err := s.relabelVersion(ctx, ix, &st); err != nil {
		return st, err
	}
	kept := nextKept(version, l.kept, s.keep)
	if err := s.switchAliases(ctx, l, kept); err != nil {
		return st, err
	}
	if st.Dropped, err = s.dropVersions(ctx, l, kept); err != nil {
		return st, err
	}
	return st, nil
}

// fill makes the version's collections hold ix, copying unchanged pages from the source collections.
func (s *Store) fill(ctx context.Context, ix *index.Index, l layout, st *SyncStats) error {
	sumT, chT := s.VersionCollections(ix.Manifest.Version)
	if err := s.ensureCollections(ctx, ix.Manifest.Dimension, sumT, chT); err != nil {
		return err
	}
	have, err := s.remotePages(ctx, sumT)
	if err != nil {
		return err
	}
	var srcSum, srcCh string
	switch {
	case l.legacy[s.summaries] && l.legacy[s.chunks]:
		srcSum, srcCh = s.summaries, s.chunks
	case l.current() != "":
		srcSum, srcCh = s.VersionCollections(l.current())
	}
	src := map[string]remotePage{}
	if srcSum != "" {
		if src, err = s.remotePages(ctx, srcSum); err != nil {
			return err
		}
	}

	present := make(map[string]bool, len(ix.Pages))
	for _, p := range ix.Pages {
		present[p.URL] = true
	}
	for u := range src {
		if !present[u] {
			st.PagesDeleted++
		}
	}
	// Pages an interrupted sync of this version wrote and the index does not have cannot arise from one
	// index, but the collections must hold exactly ix.
	var gone []string
	for u := range have {
		if !present[u] {
			gone = append(gone, u)
		}
	}
	if err := s.deleteURLs(ctx, sumT, chT, gone); err != nil {
		return err
	}

	chunkTexts, err := index.ChunkSearchTexts(ix)
	if err != nil {
		return fmt.Errorf("qdrant: sync: %w", err)
	}
	pageAvg := averageTerms(func(yield func(string) bool) {
		for i := range ix.Pages {
			if !yield(index.PageSearchText(&ix.Pages[i])) {
				return
			}
		}
	})
	chunkAvg := averageTerms(slices.Values(chunkTexts))
	settings := settingsDigest(ix)

	var summaryPoints, chunkPoints []*qdrant.PointStruct
	var trims, relabels []*qdrant.PointsUpdateOperation
	copies := map[string]*index.Page{}
	for i := range ix.Pages {
		p := &ix.Pages[i]
		fp := fingerprint(p, settings)
		if h, ok := have[p.URL]; ok && h.fingerprint == fp {
			// Written by an interrupted sync of this version (or an earlier release's, labels to set).
			if !h.current(p) {
				relabels = append(relabels, relabelOp(p))
				st.PagesRelabelled++
			}
			continue
		}
		if h, ok := have[p.URL]; ok && h.chunks > int64(len(p.Chunks)) {
			trims = append(trims, deleteOp(urlFilter(p.URL, int64(len(p.Chunks)))))
		}
		if r, ok := src[p.URL]; ok && r.fingerprint == fp {
			copies[p.URL] = p
			st.PagesCopied++
			st.ChunksCopied += len(p.Chunks)
			if !r.current(p) {
				st.PagesRelabelled++
			}
			continue
		}
		summaryPoints = append(summaryPoints, s.summaryPoint(ix, p, fp, pageAvg))
		for _, cid := range p.Chunks {
			chunkPoints = append(chunkPoints, s.chunkPoint(ix, p, cid, chunkTexts[cid], chunkAvg))
		}
		st.PagesWritten++
		st.ChunksWritten += len(p.Chunks)
	}
	if err := s.updateBatch(ctx, chT, trims); err != nil {
		return err
	}
	if err := s.updateBatch(ctx, chT, relabels); err != nil {
		return err
	}
	if err := s.updateBatch(ctx, sumT, relabels); err != nil {
		return err
	}
	if err := s.copyPoints(ctx, srcCh, chT, copies); err != nil {
		return err
	}
	if err := s.upsert(ctx, chT, chunkPoints); err != nil {
		return err
	}
	if err := s.copyPoints(ctx, srcSum, sumT, copies); err != nil {
		return err
	}
	return s.upsert(ctx, sumT, summaryPoints)
}

func checkIndex(ix *index.Index) error {
	dim := ix.Manifest.Dimension
	if len(ix.SummaryVectors) != len(ix.Pages) || len(ix.ChunkVectors) != len(ix.Chunks) {
		return fmt.Errorf("qdrant: sync: %d summary vectors for %d pages, %d chunk vectors for %d chunks",
			len(ix.SummaryVectors), len(ix.Pages), len(ix.ChunkVectors), len(ix.Chunks))
	}
	for _, rows := range [][][]float32{ix.SummaryVectors, ix.ChunkVectors} {
		for i, v := range rows {
			if len(v) != dim {
				return fmt.Errorf("qdrant: sync: vector %d has dimension %d, manifest %d", i, len(v), dim)
			}
		}
	}
	for i := range ix.Pages {
		for _, c := range ix.Pages[i].Chunks {
			if c < 0 || c >= len(ix.Chunks) {
				return fmt.Errorf("qdrant: sync: page %d names chunk %d of %d", i, c, len(ix.Chunks))
			}
		}
	}
	return nil
}

// settingsDigest condenses what, besides a page's own fields, shapes its points: the embedder and its state
// (the local embedder's IDF table, under which every vector changes), the tokenizer and the ingest settings.
func settingsDigest(ix *index.Index) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%s\x00%d\x00%d\x00", ix.Manifest.Embedder, ix.Manifest.Dimension, ix.Manifest.Tokenizer,
		sparseVersion, ix.Manifest.SearchText)
	st := sha256.Sum256(ix.EmbedderState)
	h.Write(st[:])
	h.Write(ix.Manifest.Settings)
	return hex.EncodeToString(h.Sum(nil))
}

// sparseVersion identifies how sparse vectors are made (Terms and the texts they weigh): points made under
// another are rewritten.
const sparseVersion = 2

// fingerprint identifies everything a page's points are made of, except the labels Upsert can relabel.
func fingerprint(p *index.Page, settings string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%d", settings, p.Hash, p.Title, p.Summary, len(p.Chunks))
	return hex.EncodeToString(h.Sum(nil))[:32]
}

func pageID(u string) *qdrant.PointId {
	return qdrant.NewIDUUID(uuid.NewSHA1(pointNamespace, []byte(u)).String())
}

func chunkID(u string, ord int) *qdrant.PointId {
	return qdrant.NewIDUUID(uuid.NewSHA1(pointNamespace, []byte(u+"#chunk="+strconv.Itoa(ord))).String())
}

func labelPayload(p *index.Page) map[string]*qdrant.Value {
	keys := retrieval.ScopeKeys(p.URL)
	prefixes := make([]*qdrant.Value, len(keys))
	for i, k := range keys {
		prefixes[i] = qdrant.NewValueString(k)
	}
	return map[string]*qdrant.Value{
		keyPageID:    qdrant.NewValueInt(int64(p.ID)),
		keyCommunity: qdrant.NewValueInt(int64(p.Community)),
		keySection:   qdrant.NewValueString(p.Section),
		keyPrefixes:  qdrant.NewValueFromList(prefixes...),
	}
}

// relabelOp sets a page's labels on its points (its summary, or its chunks: both match its URL), leaving
// their vectors and other payload as they are.
func relabelOp(p *index.Page) *qdrant.PointsUpdateOperation {
	return qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{
		Payload:        labelPayload(p),
		PointsSelector: qdrant.NewPointsSelectorFilter(urlFilter(p.URL, -1)),
	})
}

// relabelVersion sets the labels of the pages whose points in the version's own collections record other ones,
// without rewriting vectors: a re-sync of the version the aliases name otherwise writes nothing, and points an
// earlier release wrote lack url_prefixes (the payload index on it is created too). Pages whose content differs
// cannot arise from one version and are left to Verify to report.
func (s *Store) relabelVersion(ctx context.Context, ix *index.Index, st *SyncStats) error {
	sumT, chT := s.VersionCollections(ix.Manifest.Version)
	have, err := s.remotePages(ctx, sumT)
	if err != nil {
		return err
	}
	settings := settingsDigest(ix)
	var ops []*qdrant.PointsUpdateOperation
	for i := range ix.Pages {
		p := &ix.Pages[i]
		if h, ok := have[p.URL]; ok && h.fingerprint == fingerprint(p, settings) && !h.current(p) {
			ops = append(ops, relabelOp(p))
		}
	}
	if len(ops) == 0 {
		return nil
	}
	for _, coll := range []string{chT, sumT} {
		_, err := s.client.CreateFieldIndex(ctx, &qdrant.CreateFieldIndexCollection{
			CollectionName: coll, Wait: qdrant.PtrOf(true), FieldName: keyPrefixes,
			FieldType: qdrant.PtrOf(qdrant.FieldType_FieldTypeKeyword),
		})
		if err != nil {
			return fmt.Errorf("qdrant: create payload index %s.%s: %w", coll, keyPrefixes, err)
		}
		if err := s.updateBatch(ctx, coll, ops); err != nil {
			return err
		}
	}
	st.PagesRelabelled += len(ops)
	return nil
}

func (s *Store) summaryPoint(ix *index.Index, p *index.Page, fp string, avg float64) *qdrant.PointStruct {
	payload := labelPayload(p)
	payload[keyURL] = qdrant.NewValueString(p.URL)
	payload[keyTitle] = qdrant.NewValueString(p.Title)
	payload[keyChunks] = qdrant.NewValueInt(int64(len(p.Chunks)))
	payload[keyFingerprint] = qdrant.NewValueString(fp)
	return &qdrant.PointStruct{Id: pageID(p.URL), Payload: payload, Vectors: s.vectors(ix.SummaryVectors[p.ID], index.PageSearchText(p), avg)}
}

// chunkPoint is chunk cid's point; text is its search text (index.SearchText), which its sparse vector weighs.
func (s *Store) chunkPoint(ix *index.Index, p *index.Page, cid int, text string, avg float64) *qdrant.PointStruct {
	c := &ix.Chunks[cid]
	payload := labelPayload(p)
	payload[keyURL] = qdrant.NewValueString(p.URL)
	payload[keyOrd] = qdrant.NewValueInt(int64(c.Ord))
	return &qdrant.PointStruct{Id: chunkID(p.URL, c.Ord), Payload: payload, Vectors: s.vectors(ix.ChunkVectors[cid], text, avg)}
}

func (s *Store) vectors(dense []float32, text string, avg float64) *qdrant.Vectors {
	vs := map[string]*qdrant.Vector{DenseVector: qdrant.NewVectorDense(dense)}
	if idx, val := s.sparse(text, avg); len(idx) > 0 {
		vs[SparseVector] = qdrant.NewVectorSparse(idx, val)
	}
	return qdrant.NewVectorsMap(vs)
}

// urlFilter selects the points of a page; with minOrd >= 0 only its chunks from that position on.
func urlFilter(u string, minOrd int64) *qdrant.Filter {
	f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeyword(keyURL, u)}}
	if minOrd >= 0 {
		f.Must = append(f.Must, qdrant.NewRange(keyOrd, &qdrant.Range{Gte: qdrant.PtrOf(float64(minOrd))}))
	}
	return f
}

func deleteOp(f *qdrant.Filter) *qdrant.PointsUpdateOperation {
	return qdrant.NewPointsUpdateDeletePoints(&qdrant.PointsUpdateOperation_DeletePoints{Points: qdrant.NewPointsSelectorFilter(f)})
}

// remotePages scrolls a summaries collection for what it records of each page, by URL.
func (s *Store) remotePages(ctx context.Context, coll string) (map[string]remotePage, error) {
	out := map[string]remotePage{}
	var offset *qdrant.PointId
	for {
		points, next, err := s.client.ScrollAndOffset(ctx, &qdrant.ScrollPoints{
			CollectionName: coll,
			Offset:         offset,
			Limit:          qdrant.PtrOf(uint32(1024)),
			WithPayload:    qdrant.NewWithPayloadInclude(keyURL, keyFingerprint, keyPageID, keyCommunity, keySection, keyPrefixes, keyChunks),
		})
		if err != nil {
			return nil, fmt.Errorf("qdrant: scroll %s: %w", coll, err)
		}
		for _, p := range points {
			pl := p.GetPayload()
			out[pl[keyURL].GetStringValue()] = remotePage{
				fingerprint: pl[keyFingerprint].GetStringValue(),
				pageID:      pl[keyPageID].GetIntegerValue(),
				community:   pl[keyCommunity].GetIntegerValue(),
				section:     pl[keySection].GetStringValue(),
				prefixes:    stringList(pl[keyPrefixes]),
				unlabelled:  pl[keyPrefixes] == nil,
				chunks:      pl[keyChunks].GetIntegerValue(),
			}
		}
		if next == nil || len(points) == 0 {
			return out, nil
		}
		offset = next
	}
}

// deleteURLs removes every point of the given pages from both collections.
func (s *Store) deleteURLs(ctx context.Context, summaries, chunks string, urls []string) error {
	for start := 0; start < len(urls); start += s.batch {
		part := urls[start:min(start+s.batch, len(urls))]
		f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeywords(keyURL, part...)}}
		for _, coll := range []string{summaries, chunks} {
			_, err := s.client.Delete(ctx, &qdrant.DeletePoints{
				CollectionName: coll,
				Wait:           qdrant.PtrOf(true),
				Points:         qdrant.NewPointsSelectorFilter(f),
			})
			if err != nil {
				return fmt.Errorf("qdrant: delete %d pages from %s: %w", len(part), coll, err)
			}
		}
	}
	return nil
}

func (s *Store) upsert(ctx context.Context, coll string, points []*qdrant.PointStruct) error {
	for start := 0; start < len(points); start += s.batch {
		part := points[start:min(start+s.batch, len(points))]
		_, err := s.client.Upsert(ctx, &qdrant.UpsertPoints{CollectionName: coll, Wait: qdrant.PtrOf(true), Points: part})
		if err != nil {
			return fmt.Errorf("qdrant: upsert %d points into %s: %w", len(part), coll, err)
		}
	}
	return nil
}

func (s *Store) updateBatch(ctx context.Context, coll string, ops []*qdrant.PointsUpdateOperation) error {
	for start := 0; start < len(ops); start += s.batch {
		part := ops[start:min(start+s.batch, len(ops))]
		_, err := s.client.UpdateBatch(ctx, &qdrant.UpdateBatchPoints{CollectionName: coll, Wait: qdrant.PtrOf(true), Operations: part})
		if err != nil {
			return fmt.Errorf("qdrant: batch update of %d operations on %s: %w", len(part), coll, err)
		}
	}
	return nil
}

// copyPoints copies the points of the given pages (by URL) from one collection to another, vectors and
// payload as they are except the labels, which are set from the pages.
func (s *Store) copyPoints(ctx context.Context, from, to string, pages map[string]*index.Page) error {
	urls := make([]string, 0, len(pages))
	for u := range pages {
		urls = append(urls, u)
	}
	slices.Sort(urls)
	for start := 0; start < len(urls); start += s.batch {
		part := urls[start:min(start+s.batch, len(urls))]
		filter := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeywords(keyURL, part...)}}
		var offset *qdrant.PointId
		for {
			points, next, err := s.client.ScrollAndOffset(ctx, &qdrant.ScrollPoints{
				CollectionName: from,
				Filter:         filter,
				Offset:         offset,
				Limit:          qdrant.PtrOf(uint32(s.batch)),
				WithPayload:    qdrant.NewWithPayload(true),
				WithVectors:    qdrant.NewWithVectors(true),
			})
			if err != nil {
				return fmt.Errorf("qdrant: copy from %s: %w", from, err)
			}
			out := make([]*qdrant.PointStruct, 0, len(points))
			for _, p := range points {
				vs, err := inputVectors(p.GetVectors())
				if err != nil {
					return fmt.Errorf("qdrant: copy from %s: point %s: %w", from, idKey(p.GetId()), err)
				}
				payload := p.GetPayload()
				if page := pages[payload[keyURL].GetStringValue()]; page != nil {
					maps.Copy(payload, labelPayload(page))
				}
				out = append(out, &qdrant.PointStruct{Id: p.GetId(), Payload: payload, Vectors: vs})
			}
			if err := s.upsert(ctx, to, out); err != nil {
				return err
			}
			if next == nil || len(points) == 0 {
				break
			}
			offset = next
		}
	}
	return nil
}

// inputVectors turns the named vectors a scroll returns into the form an upsert sends. Older Qdrant
// versions answer in the deprecated flat fields (data, and indices for sparse vectors), newer ones in the typed
// ones.
func inputVectors(out *qdrant.VectorsOutput) (*qdrant.Vectors, error) {
	named := out.GetVectors().GetVectors()
	if named == nil {
		return nil, errors.New("no named vectors")
	}
	vs := make(map[string]*qdrant.Vector, len(named))
	for name, v := range named {
		switch {
		case v.GetDense() != nil:
			vs[name] = qdrant.NewVectorDense(v.GetDense().GetData())
		case v.GetSparse() != nil:
			vs[name] = qdrant.NewVectorSparse(v.GetSparse().GetIndices(), v.GetSparse().GetValues())
		case v.GetIndices() != nil:
			vs[name] = qdrant.NewVectorSparse(v.GetIndices().GetData(), v.GetData())
		case len(v.GetData()) > 0:
			vs[name] = qdrant.NewVectorDense(v.GetData())
		default:
			return nil, fmt.Errorf("vector %q of an unsupported kind", name)
		}
	}
	return qdrant.NewVectorsMap(vs), nil
}

func idKey(id *qdrant.PointId) string {
	if u := id.GetUuid(); u != "" {
		return u
	}
	return strconv.FormatUint(id.GetNum(), 10)
}

// stringList reads a payload array of strings; nil when v is missing or not an array.
func stringList(v *qdrant.Value) []string {
	var out []string
	for _, e := range v.GetListValue().GetValues() {
		out = append(out, e.GetStringValue())
	}
	return out
}
