package qdrant

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/google/uuid"
	"github.com/qdrant/go-client/qdrant"

	"github.com/ragproxy/ragproxy/index"
)

// pointNamespace scopes the name-based UUIDs of points.
var pointNamespace = uuid.MustParse("3c1b5c0e-8f0d-4c53-9d8e-6b0a3f2d7e41")

// SyncStats counts what Upsert changed.
type SyncStats struct {
	// PagesWritten is the number of pages whose summary and chunks were (re)written.
	PagesWritten int
	// ChunksWritten is the number of chunk points written.
	ChunksWritten int
	// PagesDeleted is the number of pages removed because the index no longer has them.
	PagesDeleted int
	// PagesRelabelled is the number of unchanged pages whose page_id, community or section was rewritten.
	PagesRelabelled int
}

// remotePage is what the summaries collection records about a page.
type remotePage struct {
	fingerprint string
	pageID      int64
	community   int64
	section     string
	chunks      int64
}

// Upsert makes the collections hold exactly the pages and chunks of ix: it creates missing collections,
// deletes the points of pages that disappeared, rewrites pages whose content, summary, embedder or ingest
// settings changed, and relabels unchanged pages whose page id, community or section moved. Unchanged pages
// are not re-sent. Writes wait for Qdrant to apply them, so a search after Upsert sees the new state.
func (s *Store) Upsert(ctx context.Context, ix *index.Index) (SyncStats, error) {
	var st SyncStats
	dim := ix.Manifest.Dimension
	if err := checkIndex(ix); err != nil {
		return st, err
	}
	if err := s.EnsureCollections(ctx, dim); err != nil {
		return st, err
	}
	remote, err := s.remotePages(ctx)
	if err != nil {
		return st, err
	}

	// Pages that disappeared.
	present := make(map[string]bool, len(ix.Pages))
	for _, p := range ix.Pages {
		present[p.URL] = true
	}
	var gone []string
	for u := range remote {
		if !present[u] {
			gone = append(gone, u)
		}
	}
	if err := s.deleteURLs(ctx, gone); err != nil {
		return st, err
	}
	st.PagesDeleted = len(gone)

	pageAvg := averageTerms(func(yield func(string) bool) {
		for _, p := range ix.Pages {
			if !yield(pageText(&p)) {
				return
			}
		}
	})
	chunkAvg := averageTerms(func(yield func(string) bool) {
		for _, c := range ix.Chunks {
			if !yield(c.Text) {
				return
			}
		}
	})
	settings := settingsDigest(ix)

	var summaryPoints, chunkPoints []*qdrant.PointStruct
	var summaryOps, chunkOps []*qdrant.PointsUpdateOperation
	for i := range ix.Pages {
		p := &ix.Pages[i]
		fp := fingerprint(p, settings)
		r, known := remote[p.URL]
		switch {
		case !known || r.fingerprint != fp:
			summaryPoints = append(summaryPoints, s.summaryPoint(ix, p, fp, pageAvg))
			for _, cid := range p.Chunks {
				chunkPoints = append(chunkPoints, s.chunkPoint(ix, p, cid, chunkAvg))
			}
			if known && r.chunks > int64(len(p.Chunks)) {
				chunkOps = append(chunkOps, deleteOp(urlFilter(p.URL, int64(len(p.Chunks)))))
			}
			st.PagesWritten++
			st.ChunksWritten += len(p.Chunks)
		case r.pageID != int64(p.ID) || r.community != int64(p.Community) || r.section != p.Section:
			labels := labelPayload(p)
			summaryOps = append(summaryOps, setPayloadOp(labels, qdrant.NewPointsSelector(pageID(p.URL))))
			chunkOps = append(chunkOps, setPayloadOp(labels, qdrant.NewPointsSelectorFilter(urlFilter(p.URL, -1))))
			st.PagesRelabelled++
		}
	}
	if err := s.upsert(ctx, s.summaries, summaryPoints); err != nil {
		return st, err
	}
	if err := s.upsert(ctx, s.chunks, chunkPoints); err != nil {
		return st, err
	}
	if err := s.updateBatch(ctx, s.summaries, summaryOps); err != nil {
		return st, err
	}
	if err := s.updateBatch(ctx, s.chunks, chunkOps); err != nil {
		return st, err
	}
	return st, nil
}

func checkIndex(ix *index.Index) error {
	dim := ix.Manifest.Dimension
	if len(ix.SummaryVectors) != len(ix.Pages) || len(ix.ChunkVectors) != len(ix.Chunks) {
		return fmt.Errorf("qdrant: upsert: %d summary vectors for %d pages, %d chunk vectors for %d chunks",
			len(ix.SummaryVectors), len(ix.Pages), len(ix.ChunkVectors), len(ix.Chunks))
	}
	for _, rows := range [][][]float32{ix.SummaryVectors, ix.ChunkVectors} {
		for i, v := range rows {
			if len(v) != dim {
				return fmt.Errorf("qdrant: upsert: vector %d has dimension %d, manifest %d", i, len(v), dim)
			}
		}
	}
	for i := range ix.Pages {
		for _, c := range ix.Pages[i].Chunks {
			if c < 0 || c >= len(ix.Chunks) {
				return fmt.Errorf("qdrant: upsert: page %d names chunk %d of %d", i, c, len(ix.Chunks))
			}
		}
	}
	return nil
}

// pageText is what BM25 over pages reads: the title and the cleaned content.
func pageText(p *index.Page) string {
	return p.Title + "\n" + p.Markdown
}

// settingsDigest condenses what, besides a page's own fields, shapes its points.
func settingsDigest(ix *index.Index) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%d\x00%s\x00", ix.Manifest.Embedder, ix.Manifest.Dimension, ix.Manifest.Tokenizer)
	h.Write(ix.Manifest.Settings)
	return hex.EncodeToString(h.Sum(nil))
}

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
	return map[string]*qdrant.Value{
		keyPageID:    qdrant.NewValueInt(int64(p.ID)),
		keyCommunity: qdrant.NewValueInt(int64(p.Community)),
		keySection:   qdrant.NewValueString(p.Section),
	}
}

func (s *Store) summaryPoint(ix *index.Index, p *index.Page, fp string, avg float64) *qdrant.PointStruct {
	payload := labelPayload(p)
	payload[keyURL] = qdrant.NewValueString(p.URL)
	payload[keyTitle] = qdrant.NewValueString(p.Title)
	payload[keyChunks] = qdrant.NewValueInt(int64(len(p.Chunks)))
	payload[keyFingerprint] = qdrant.NewValueString(fp)
	return &qdrant.PointStruct{Id: pageID(p.URL), Payload: payload, Vectors: s.vectors(ix.SummaryVectors[p.ID], pageText(p), avg)}
}

func (s *Store) chunkPoint(ix *index.Index, p *index.Page, cid int, avg float64) *qdrant.PointStruct {
	c := &ix.Chunks[cid]
	payload := labelPayload(p)
	payload[keyURL] = qdrant.NewValueString(p.URL)
	payload[keyOrd] = qdrant.NewValueInt(int64(c.Ord))
	return &qdrant.PointStruct{Id: chunkID(p.URL, c.Ord), Payload: payload, Vectors: s.vectors(ix.ChunkVectors[cid], c.Text, avg)}
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

func setPayloadOp(payload map[string]*qdrant.Value, sel *qdrant.PointsSelector) *qdrant.PointsUpdateOperation {
	return qdrant.NewPointsUpdateSetPayload(&qdrant.PointsUpdateOperation_SetPayload{Payload: payload, PointsSelector: sel})
}

// remotePages scrolls the summaries collection for what it records of each page, by URL.
func (s *Store) remotePages(ctx context.Context) (map[string]remotePage, error) {
	out := map[string]remotePage{}
	var offset *qdrant.PointId
	for {
		points, next, err := s.client.ScrollAndOffset(ctx, &qdrant.ScrollPoints{
			CollectionName: s.summaries,
			Offset:         offset,
			Limit:          qdrant.PtrOf(uint32(1024)),
			WithPayload:    qdrant.NewWithPayloadInclude(keyURL, keyFingerprint, keyPageID, keyCommunity, keySection, keyChunks),
		})
		if err != nil {
			return nil, fmt.Errorf("qdrant: scroll %s: %w", s.summaries, err)
		}
		for _, p := range points {
			pl := p.GetPayload()
			out[pl[keyURL].GetStringValue()] = remotePage{
				fingerprint: pl[keyFingerprint].GetStringValue(),
				pageID:      pl[keyPageID].GetIntegerValue(),
				community:   pl[keyCommunity].GetIntegerValue(),
				section:     pl[keySection].GetStringValue(),
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
func (s *Store) deleteURLs(ctx context.Context, urls []string) error {
	for start := 0; start < len(urls); start += s.batch {
		part := urls[start:min(start+s.batch, len(urls))]
		f := &qdrant.Filter{Must: []*qdrant.Condition{qdrant.NewMatchKeywords(keyURL, part...)}}
		for _, coll := range []string{s.summaries, s.chunks} {
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
