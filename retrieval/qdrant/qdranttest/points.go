package qdranttest

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// This file holds what the fake does with a collection's points: writing them, selecting them by id or filter,
// scoring them for a query (cosine, sparse dot products with Qdrant's IDF modifier), and the payload and vectors a
// reply carries.

// scoredKey is a point's key with its score for a query.
type scoredKey struct {
	key   string
	score float64
}

func sortScored(s []scoredKey) {
	sort.Slice(s, func(i, j int) bool {
		if s[i].score != s[j].score {
			return s[i].score > s[j].score
		}
		return s[i].key < s[j].key
	})
}

func idKey(id *qdrant.PointId) string {
	if u := id.GetUuid(); u != "" {
		return u
	}
	return fmt.Sprintf("%020d", id.GetNum())
}

func (c *fakeCollection) upsert(points []*qdrant.PointStruct) error {
	for _, p := range points {
		fp := &fakePoint{id: p.GetId(), payload: map[string]*qdrant.Value{}, dense: map[string][]float32{}, sparse: map[string]*qdrant.SparseVector{}}
		for k, v := range p.GetPayload() {
			fp.payload[k] = proto.Clone(v).(*qdrant.Value)
		}
		named := p.GetVectors().GetVectors().GetVectors()
		if named == nil {
			return status.Error(codes.InvalidArgument, "fake: points need named vectors")
		}
		for name, v := range named {
			switch {
			case v.GetDense() != nil:
				dim, ok := c.dense[name]
				if !ok {
					return status.Errorf(codes.InvalidArgument, "Wrong input: Not existing vector name error: %s", name)
				}
				if uint64(len(v.GetDense().GetData())) != dim {
					return status.Errorf(codes.InvalidArgument, "Wrong input: Vector dimension error: expected dim: %d, got %d", dim, len(v.GetDense().GetData()))
				}
				fp.dense[name] = slices.Clone(v.GetDense().GetData())
			case v.GetSparse() != nil:
				if _, ok := c.sparse[name]; !ok {
					return status.Errorf(codes.InvalidArgument, "Wrong input: Not existing vector name error: %s", name)
				}
				sv := v.GetSparse()
				if len(sv.GetIndices()) != len(sv.GetValues()) {
					return status.Error(codes.InvalidArgument, "sparse vector: indices and values differ in length")
				}
				fp.sparse[name] = proto.Clone(sv).(*qdrant.SparseVector)
			default:
				return status.Errorf(codes.Unimplemented, "fake: vector %q kind", name)
			}
		}
		for name := range c.dense {
			if _, ok := fp.dense[name]; !ok {
				return status.Errorf(codes.InvalidArgument, "Wrong input: missing dense vector %q", name)
			}
		}
		c.points[idKey(p.GetId())] = fp
	}
	return nil
}

// selected returns the keys of the points a selector names.
func (c *fakeCollection) selected(sel *qdrant.PointsSelector) ([]string, error) {
	var keys []string
	switch s := sel.GetPointsSelectorOneOf().(type) {
	case *qdrant.PointsSelector_Points:
		for _, id := range s.Points.GetIds() {
			if _, ok := c.points[idKey(id)]; ok {
				keys = append(keys, idKey(id))
			}
		}
	case *qdrant.PointsSelector_Filter:
		for k, p := range c.points {
			ok, err := matches(s.Filter, p.payload)
			if err != nil {
				return nil, err
			}
			if ok {
				keys = append(keys, k)
			}
		}
	default:
		return nil, status.Error(codes.InvalidArgument, "points selector required")
	}
	return keys, nil
}

func (c *fakeCollection) delete(sel *qdrant.PointsSelector) error {
	keys, err := c.selected(sel)
	for _, k := range keys {
		delete(c.points, k)
	}
	return err
}

func (c *fakeCollection) setPayload(payload map[string]*qdrant.Value, sel *qdrant.PointsSelector) error {
	keys, err := c.selected(sel)
	for _, k := range keys {
		for f, v := range payload {
			c.points[k].payload[f] = proto.Clone(v).(*qdrant.Value)
		}
	}
	return err
}

func (c *fakeCollection) deletePayload(keys []string, sel *qdrant.PointsSelector) error {
	selected, err := c.selected(sel)
	for _, k := range selected {
		for _, f := range keys {
			delete(c.points[k].payload, f)
		}
	}
	return err
}

// nearest ranks the points matching filter against a nearest-neighbour query on vector using.
func (c *fakeCollection) nearest(q *qdrant.Query, using string, filter *qdrant.Filter, limit int) ([]scoredKey, error) {
	in := q.GetNearest()
	if in == nil {
		return nil, status.Errorf(codes.Unimplemented, "fake: prefetch query %T", q.GetVariant())
	}
	var out []scoredKey
	switch {
	case in.GetDense() != nil:
		dim, ok := c.dense[using]
		if !ok {
			return nil, status.Errorf(codes.InvalidArgument, "Wrong input: Not existing vector name error: %s", using)
		}
		qv := in.GetDense().GetData()
		if uint64(len(qv)) != dim {
			return nil, status.Errorf(codes.InvalidArgument, "Wrong input: Vector dimension error: expected dim: %d, got %d", dim, len(qv))
		}
		for k, p := range c.points {
			if ok, err := matches(filter, p.payload); err != nil || !ok {
				if err != nil {
					return nil, err
				}
				continue
			}
			out = append(out, scoredKey{k, cosine(qv, p.dense[using])})
		}
	case in.GetSparse() != nil:
		idf, ok := c.sparse[using]
		if !ok {
			return nil, status.Errorf(codes.InvalidArgument, "Wrong input: Not existing vector name error: %s", using)
		}
		weights := c.idf(using, idf)
		qs := in.GetSparse()
		for k, p := range c.points {
			dv := p.sparse[using]
			if dv == nil {
				continue
			}
			if ok, err := matches(filter, p.payload); err != nil || !ok {
				if err != nil {
					return nil, err
				}
				continue
			}
			score, overlap := 0.0, false
			for i, t := range qs.GetIndices() {
				if j := slices.Index(dv.GetIndices(), t); j >= 0 {
					overlap = true
					score += float64(qs.GetValues()[i]) * float64(dv.GetValues()[j]) * weights[t]
				}
			}
			if overlap { // Qdrant's sparse search only returns points sharing a term with the query
				out = append(out, scoredKey{k, score})
			}
		}
	default:
		return nil, status.Errorf(codes.Unimplemented, "fake: nearest input %T", in.GetVariant())
	}
	sortScored(out)
	if limit == 0 {
		limit = 10
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// idf returns each term's inverse document frequency over the points holding the sparse vector, as Qdrant's
// IDF modifier computes it: ln(1 + (N − n + 0.5) / (n + 0.5)). Without the modifier every weight is 1.
func (c *fakeCollection) idf(using string, modifier bool) map[uint32]float64 {
	df := map[uint32]float64{}
	n := 0.0
	for _, p := range c.points {
		if sv := p.sparse[using]; sv != nil {
			n++
			for _, t := range sv.GetIndices() {
				df[t]++
			}
		}
	}
	w := map[uint32]float64{}
	for t, d := range df {
		w[t] = 1
		if modifier {
			w[t] = math.Log(1 + (n-d+0.5)/(d+0.5))
		}
	}
	return w
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// matches evaluates a Qdrant filter against a payload.
func matches(f *qdrant.Filter, payload map[string]*qdrant.Value) (bool, error) {
	if f == nil {
		return true, nil
	}
	if f.MinShould != nil {
		return false, status.Error(codes.Unimplemented, "fake: min_should")
	}
	for _, c := range f.GetMust() {
		ok, err := condition(c, payload)
		if err != nil || !ok {
			return false, err
		}
	}
	for _, c := range f.GetMustNot() {
		ok, err := condition(c, payload)
		if err != nil || ok {
			return false, err
		}
	}
	if len(f.GetShould()) == 0 {
		return true, nil
	}
	for _, c := range f.GetShould() {
		ok, err := condition(c, payload)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

func condition(c *qdrant.Condition, payload map[string]*qdrant.Value) (bool, error) {
	switch x := c.GetConditionOneOf().(type) {
	case *qdrant.Condition_Filter:
		return matches(x.Filter, payload)
	case *qdrant.Condition_Field:
		fc := x.Field
		v, present := payload[fc.GetKey()]
		switch {
		case fc.GetMatch() != nil:
			if !present {
				return false, nil
			}
			// A match on an array field holds when one of its elements matches, as in Qdrant.
			if l, ok := v.GetKind().(*qdrant.Value_ListValue); ok {
				for _, e := range l.ListValue.GetValues() {
					if ok, err := matchValue(fc.GetMatch(), e); err != nil || ok {
						return ok, err
					}
				}
				return false, nil
			}
			return matchValue(fc.GetMatch(), v)
		case fc.GetRange() != nil:
			if !present {
				return false, nil
			}
			var n float64
			switch {
			case isInt(v):
				n = float64(v.GetIntegerValue())
			case isDouble(v):
				n = v.GetDoubleValue()
			default:
				return false, nil
			}
			r := fc.GetRange()
			return (r.Lt == nil || n < r.GetLt()) && (r.Lte == nil || n <= r.GetLte()) &&
				(r.Gt == nil || n > r.GetGt()) && (r.Gte == nil || n >= r.GetGte()), nil
		}
		return false, status.Errorf(codes.Unimplemented, "fake: field condition on %q", fc.GetKey())
	}
	return false, status.Errorf(codes.Unimplemented, "fake: condition %T", c.GetConditionOneOf())
}

// matchValue evaluates a match condition against one (non-array) value.
func matchValue(match *qdrant.Match, v *qdrant.Value) (bool, error) {
	switch m := match.GetMatchValue().(type) {
	case *qdrant.Match_Keyword:
		return v.GetStringValue() == m.Keyword && isString(v), nil
	case *qdrant.Match_Integer:
		return isInt(v) && v.GetIntegerValue() == m.Integer, nil
	case *qdrant.Match_Keywords:
		return isString(v) && slices.Contains(m.Keywords.GetStrings(), v.GetStringValue()), nil
	case *qdrant.Match_Integers:
		return isInt(v) && slices.Contains(m.Integers.GetIntegers(), v.GetIntegerValue()), nil
	default:
		return false, status.Errorf(codes.Unimplemented, "fake: match %T", m)
	}
}

func isString(v *qdrant.Value) bool {
	_, ok := v.GetKind().(*qdrant.Value_StringValue)
	return ok
}

func isInt(v *qdrant.Value) bool {
	_, ok := v.GetKind().(*qdrant.Value_IntegerValue)
	return ok
}

// selectPayload applies a with_payload selector.
func selectPayload(sel *qdrant.WithPayloadSelector, payload map[string]*qdrant.Value) map[string]*qdrant.Value {
	switch s := sel.GetSelectorOptions().(type) {
	case *qdrant.WithPayloadSelector_Enable:
		if s.Enable {
			return payload
		}
	case *qdrant.WithPayloadSelector_Include:
		out := map[string]*qdrant.Value{}
		for _, k := range s.Include.GetFields() {
			if v, ok := payload[k]; ok {
				out[k] = v
			}
		}
		return out
	}
	return nil
}

// selectVectors applies a with_vectors selector, answering in the typed form current Qdrant versions use.
func selectVectors(sel *qdrant.WithVectorsSelector, p *fakePoint) (*qdrant.VectorsOutput, error) {
	var want func(string) bool
	switch s := sel.GetSelectorOptions().(type) {
	case nil:
		return nil, nil
	case *qdrant.WithVectorsSelector_Enable:
		if !s.Enable {
			return nil, nil
		}
		want = func(string) bool { return true }
	case *qdrant.WithVectorsSelector_Include:
		want = func(name string) bool { return slices.Contains(s.Include.GetNames(), name) }
	default:
		return nil, status.Errorf(codes.Unimplemented, "fake: vectors selector %T", s)
	}
	named := map[string]*qdrant.VectorOutput{}
	for name, v := range p.dense {
		if want(name) {
			named[name] = &qdrant.VectorOutput{Vector: &qdrant.VectorOutput_Dense{Dense: &qdrant.DenseVector{Data: slices.Clone(v)}}}
		}
	}
	for name, v := range p.sparse {
		if want(name) {
			named[name] = &qdrant.VectorOutput{Vector: &qdrant.VectorOutput_Sparse{Sparse: proto.Clone(v).(*qdrant.SparseVector)}}
		}
	}
	return &qdrant.VectorsOutput{VectorsOptions: &qdrant.VectorsOutput_Vectors{Vectors: &qdrant.NamedVectorsOutput{Vectors: named}}}, nil
}

func isDouble(v *qdrant.Value) bool {
	_, ok := v.GetKind().(*qdrant.Value_DoubleValue)
	return ok
}
