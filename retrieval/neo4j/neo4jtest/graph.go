package neo4jtest

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// node is a graph node; props never hold nil (setting a property to null removes it, as in Cypher).
type node struct {
	id     int64
	labels []string
	props  map[string]any
}

func (n *node) has(label string) bool { return slices.Contains(n.labels, label) }

type rel struct {
	typ      string
	from, to *node
}

// uniqueness is a constraint: the values of props are unique among the nodes of label that have them all.
type uniqueness struct {
	label string
	props []string
}

// graph is the database's state. A transaction works on a clone, so that nodes are never shared between
// states: clone copies them.
type graph struct {
	nodes       []*node // in creation order, the order MATCH yields them
	rels        []*rel
	next        int64
	constraints map[string]uniqueness
}

func newGraph() *graph { return &graph{constraints: map[string]uniqueness{}} }

func (g *graph) clone() *graph {
	out := &graph{next: g.next, constraints: maps.Clone(g.constraints)}
	byID := make(map[*node]*node, len(g.nodes))
	for _, n := range g.nodes {
		c := &node{id: n.id, labels: slices.Clone(n.labels), props: maps.Clone(n.props)}
		byID[n] = c
		out.nodes = append(out.nodes, c)
	}
	for _, r := range g.rels {
		out.rels = append(out.rels, &rel{typ: r.typ, from: byID[r.from], to: byID[r.to]})
	}
	return out
}

func (g *graph) create(label string, props map[string]any) *node {
	n := &node{id: g.next, labels: []string{label}, props: map[string]any{}}
	g.next++
	for k, v := range props {
		set(n, k, v)
	}
	g.nodes = append(g.nodes, n)
	return n
}

// set sets a property; null removes it.
func set(n *node, key string, v any) {
	if v == nil {
		delete(n.props, key)
		return
	}
	n.props[key] = v
}

// find returns the nodes of label whose properties equal props.
func (g *graph) find(label string, props map[string]any) []*node {
	var out []*node
	for _, n := range g.nodes {
		if n.has(label) && matches(n, props) {
			out = append(out, n)
		}
	}
	return out
}

func matches(n *node, props map[string]any) bool {
	for k, v := range props {
		if v == nil || !equal(n.props[k], v) {
			return false // null equals nothing in a pattern
		}
	}
	return true
}

// merge returns the node of label with props, creating it when there is none.
func (g *graph) merge(label string, props map[string]any) *node {
	if found := g.find(label, props); len(found) > 0 {
		return found[0]
	}
	return g.create(label, props)
}

func (g *graph) link(typ string, from, to *node) {
	for _, r := range g.rels {
		if r.typ == typ && r.from == from && r.to == to {
			return
		}
	}
	g.rels = append(g.rels, &rel{typ: typ, from: from, to: to})
}

// outgoing returns the targets of from's relationships of typ, in creation order.
func (g *graph) outgoing(typ string, from *node) []*node {
	var out []*node
	for _, r := range g.rels {
		if r.typ == typ && r.from == from {
			out = append(out, r.to)
		}
	}
	return out
}

// remove deletes nodes; with detach their relationships too, else a node that has some is an error.
func (g *graph) remove(detach bool, nodes ...*node) *failure {
	gone := map[*node]bool{}
	for _, n := range nodes {
		gone[n] = true
	}
	for _, r := range g.rels {
		if (gone[r.from] || gone[r.to]) && !detach {
			return &failure{"Neo.ClientError.Schema.ConstraintValidationFailed", fmt.Sprintf("Cannot delete node<%d>, because it still has relationships. To delete this node, you must first delete its relationships.", r.from.id)}
		}
	}
	g.rels = slices.DeleteFunc(g.rels, func(r *rel) bool { return gone[r.from] || gone[r.to] })
	g.nodes = slices.DeleteFunc(g.nodes, func(n *node) bool { return gone[n] })
	return nil
}

// validate checks the uniqueness constraints, as Neo4j does when a statement's changes are applied.
func (g *graph) validate() *failure {
	for name, c := range g.constraints {
		seen := map[string]bool{}
		for _, n := range g.nodes {
			if !n.has(c.label) {
				continue
			}
			key, complete := "", true
			for _, p := range c.props {
				v, ok := n.props[p]
				complete = complete && ok
				key += fmt.Sprintf("%T:%v\x00", v, v)
			}
			if !complete {
				continue
			}
			if seen[key] {
				return &failure{"Neo.ClientError.Schema.ConstraintValidationFailed", fmt.Sprintf("Node(%d) already exists with label `%s` and properties %v (constraint %s)", n.id, c.label, c.props, name)}
			}
			seen[key] = true
		}
	}
	return nil
}

// equal compares two property values as Cypher's = does for the types the store uses: integers and floats
// compare as numbers (1 = 1.0), values of other types differ.
func equal(a, b any) bool {
	if fa, ok := number(a); ok {
		fb, ok := number(b)
		return ok && fa == fb
	}
	switch a := a.(type) {
	case string:
		b, ok := b.(string)
		return ok && a == b
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	}
	return false
}

func number(v any) (float64, bool) {
	switch v := v.(type) {
	case int64:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}

// compare orders values as ORDER BY does ascending: numbers, then strings, then null last.
func compare(a, b any) int {
	rank := func(v any) int {
		switch v.(type) {
		case int64:
			return 1
		case string:
			return 2
		case nil:
			return 9
		}
		return 5
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return cmp.Compare(ra, rb)
	}
	switch a := a.(type) {
	case int64:
		return cmp.Compare(a, b.(int64))
	case string:
		return cmp.Compare(a, b.(string))
	}
	return 0
}

// output is a statement's result.
type output struct {
	fields []string
	rows   [][]any
}

// statement is one Cypher statement the fake understands: kind is its type as SUCCESS reports it (r, w,
// s) and run executes it on a graph, which the caller discards when it returns an error.
type statement struct {
	kind string
	run  func(g *graph, params map[string]any) (output, *failure)
}

var (
	dropConstraint   = regexp.MustCompile(`^DROP CONSTRAINT (\w+) IF EXISTS$`)
	createConstraint = regexp.MustCompile(`^CREATE CONSTRAINT (\w+) IF NOT EXISTS FOR \((\w+):(\w+)\) REQUIRE (.+) IS UNIQUE$`)
	constraintProp   = regexp.MustCompile(`^(\w+)\.(\w+)$`)
)

// lookup recognises a statement by its text with runs of white space collapsed.
func lookup(query string) (statement, *failure) {
	q := strings.Join(strings.Fields(query), " ")
	if st, ok := statements[q]; ok {
		return st, nil
	}
	if m := dropConstraint.FindStringSubmatch(q); m != nil {
		return statement{kind: "s", run: func(g *graph, _ map[string]any) (output, *failure) {
			delete(g.constraints, m[1])
			return output{}, nil
		}}, nil
	}
	if m := createConstraint.FindStringSubmatch(q); m != nil {
		if c, ok := parseUniqueness(m[2], m[3], m[4]); ok {
			return statement{kind: "s", run: func(g *graph, _ map[string]any) (output, *failure) {
				if _, exists := g.constraints[m[1]]; exists {
					return output{}, nil
				}
				g.constraints[m[1]] = c
				if f := g.validate(); f != nil {
					return output{}, &failure{"Neo.ClientError.Schema.ConstraintCreationFailed", f.message}
				}
				return output{}, nil
			}}, nil
		}
	}
	return statement{}, &failure{"Neo.ClientError.Statement.SyntaxError", fmt.Sprintf("Invalid input: the fake does not know the statement %q", q)}
}

// parseUniqueness reads "(p.url, p.version)" or "v.version" for the variable v.
func parseUniqueness(v, label, require string) (uniqueness, bool) {
	c := uniqueness{label: label}
	list := strings.TrimSuffix(strings.TrimPrefix(require, "("), ")")
	for _, part := range strings.Split(list, ",") {
		m := constraintProp.FindStringSubmatch(strings.TrimSpace(part))
		if m == nil || m[1] != v {
			return c, false
		}
		c.props = append(c.props, m[2])
	}
	return c, true
}

// Parameters and the values in them.

func param(params map[string]any, name string) (any, *failure) {
	v, ok := params[name]
	if !ok {
		return nil, &failure{"Neo.ClientError.Statement.ParameterMissing", "Expected parameter(s): " + name}
	}
	return v, nil
}

func typed[T any](what string, v any) (T, *failure) {
	t, ok := v.(T)
	if !ok {
		var zero T
		return zero, &failure{"Neo.ClientError.Statement.TypeError", fmt.Sprintf("%s: expected %T but was %T", what, zero, v)}
	}
	return t, nil
}

func typedParam[T any](params map[string]any, name string) (T, *failure) {
	v, f := param(params, name)
	if f != nil {
		var zero T
		return zero, f
	}
	return typed[T]("$"+name, v)
}

// rows reads $rows, a list of maps, as UNWIND $rows AS row uses it.
func rows(params map[string]any) ([]map[string]any, *failure) {
	list, f := typedParam[[]any](params, "rows")
	if f != nil {
		return nil, f
	}
	out := make([]map[string]any, 0, len(list))
	for _, r := range list {
		m, f := typed[map[string]any]("row", r)
		if f != nil {
			return nil, f
		}
		out = append(out, m)
	}
	return out, nil
}

// written validates a statement's changes.
func written(g *graph) (output, *failure) {
	if f := g.validate(); f != nil {
		return output{}, f
	}
	return output{}, nil
}

// statements are the store's statements, by their text (see package ragproxy/retrieval/neo4j).
var statements = map[string]statement{
	"MATCH (v:IndexVersion) RETURN v.version AS version ORDER BY v.seq DESC": {kind: "r", run: func(g *graph, _ map[string]any) (output, *failure) {
		vs := g.find("IndexVersion", nil)
		slices.SortStableFunc(vs, func(a, b *node) int { return -compare(a.props["seq"], b.props["seq"]) })
		out := output{fields: []string{"version"}}
		for _, v := range vs {
			out.rows = append(out.rows, []any{v.props["version"]})
		}
		return out, nil
	}},

	"MATCH (p:Page {version: $version}) RETURN p.url AS url, p.fingerprint AS fingerprint": {kind: "r", run: func(g *graph, params map[string]any) (output, *failure) {
		version, f := param(params, "version")
		if f != nil {
			return output{}, f
		}
		out := output{fields: []string{"url", "fingerprint"}}
		for _, p := range g.find("Page", map[string]any{"version": version}) {
			out.rows = append(out.rows, []any{p.props["url"], p.props["fingerprint"]})
		}
		return out, nil
	}},

	"UNWIND $rows AS row MERGE (p:Page {url: row.url, version: $version}) SET p.page_id = row.page_id, p.title = row.title, p.summary = row.summary, p.section = row.section, p.hash = row.hash, p.community_id = row.community_id, p.fingerprint = row.fingerprint": {kind: "w", run: func(g *graph, params map[string]any) (output, *failure) {
		version, f := param(params, "version")
		if f != nil {
			return output{}, f
		}
		rs, f := rows(params)
		if f != nil {
			return output{}, f
		}
		for _, row := range rs {
			if row["url"] == nil || version == nil {
				return output{}, &failure{"Neo.ClientError.Statement.SemanticError", "Cannot merge the following node because of null property value for 'url' or 'version'"}
			}
			p := g.merge("Page", map[string]any{"url": row["url"], "version": version})
			for _, k := range []string{"page_id", "title", "summary", "section", "hash", "community_id", "fingerprint"} {
				set(p, k, row[k])
			}
		}
		return written(g)
	}},

	"UNWIND $rows AS row MATCH (p:Page {url: row.url, version: $version}) MERGE (p)-[:HAS_CHUNK]->(c:Chunk {chunk_number: row.chunk_number, version: $version}) SET c.chunk_id = row.chunk_id, c.content = row.content, c.tokens = row.tokens": {kind: "w", run: func(g *graph, params map[string]any) (output, *failure) {
		version, f := param(params, "version")
		if f != nil {
			return output{}, f
		}
		rs, f := rows(params)
		if f != nil {
			return output{}, f
		}
		for _, row := range rs {
			for _, p := range g.find("Page", map[string]any{"url": row["url"], "version": version}) {
				c := mergeChunk(g, p, row["chunk_number"], version)
				for _, k := range []string{"chunk_id", "content", "tokens"} {
					set(c, k, row[k])
				}
			}
		}
		return written(g)
	}},

	"UNWIND $rows AS row MATCH (old:Page {url: row.url, version: $from}) MERGE (p:Page {url: row.url, version: $version}) SET p.page_id = row.page_id, p.title = old.title, p.summary = old.summary, p.section = row.section, p.hash = old.hash, p.community_id = row.community_id, p.fingerprint = old.fingerprint WITH p, old, row MATCH (old)-[:HAS_CHUNK]->(oc:Chunk) MERGE (p)-[:HAS_CHUNK]->(c:Chunk {chunk_number: oc.chunk_number, version: $version}) SET c.chunk_id = row.chunk_ids[oc.chunk_number], c.content = oc.content, c.tokens = oc.tokens": {kind: "w", run: func(g *graph, params map[string]any) (output, *failure) {
		from, f := param(params, "from")
		if f != nil {
			return output{}, f
		}
		version, f := param(params, "version")
		if f != nil {
			return output{}, f
		}
		rs, f := rows(params)
		if f != nil {
			return output{}, f
		}
		for _, row := range rs {
			for _, old := range g.find("Page", map[string]any{"url": row["url"], "version": from}) {
				p := g.merge("Page", map[string]any{"url": row["url"], "version": version})
				set(p, "page_id", row["page_id"])
				set(p, "title", old.props["title"])
				set(p, "summary", old.props["summary"])
				set(p, "section", row["section"])
				set(p, "hash", old.props["hash"])
				set(p, "community_id", row["community_id"])
				set(p, "fingerprint", old.props["fingerprint"])
				ids, f := typed[[]any]("row.chunk_ids", row["chunk_ids"])
				if f != nil {
					return output{}, f
				}
				for _, oc := range g.outgoing("HAS_CHUNK", old) {
					if !oc.has("Chunk") {
						continue
					}
					c := mergeChunk(g, p, oc.props["chunk_number"], version)
					var id any // row.chunk_ids[i] is null outside the list
					if i, ok := oc.props["chunk_number"].(int64); ok && i >= 0 && i < int64(len(ids)) {
						id = ids[i]
					}
					set(c, "chunk_id", id)
					set(c, "content", oc.props["content"])
					set(c, "tokens", oc.props["tokens"])
				}
			}
		}
		return written(g)
	}},

	"UNWIND $rows AS row MATCH (p:Page {url: row.url, version: $version}) OPTIONAL MATCH (p)-[old:LINKS_TO]->(:Page) DELETE old WITH DISTINCT p, row UNWIND row.links AS target MATCH (q:Page {url: target, version: $version}) MERGE (p)-[:LINKS_TO]->(q)": {kind: "w", run: func(g *graph, params map[string]any) (output, *failure) {
		version, f := param(params, "version")
		if f != nil {
			return output{}, f
		}
		rs, f := rows(params)
		if f != nil {
			return output{}, f
		}
		for _, row := range rs {
			for _, p := range g.find("Page", map[string]any{"url": row["url"], "version": version}) {
				g.rels = slices.DeleteFunc(g.rels, func(r *rel) bool { return r.typ == "LINKS_TO" && r.from == p && r.to.has("Page") })
				var targets []any
				if row["links"] != nil { // UNWIND null yields no rows
					if targets, f = typed[[]any]("row.links", row["links"]); f != nil {
						return output{}, f
					}
				}
				for _, t := range targets {
					for _, q := range g.find("Page", map[string]any{"url": t, "version": version}) {
						g.link("LINKS_TO", p, q)
					}
				}
			}
		}
		return written(g)
	}},

	"MERGE (v:IndexVersion {version: $version}) WITH v OPTIONAL MATCH (o:IndexVersion) WHERE o <> v WITH v, coalesce(max(o.seq), 0) AS top SET v.seq = CASE WHEN v.seq > top THEN v.seq ELSE top + 1 END": {kind: "w", run: func(g *graph, params map[string]any) (output, *failure) {
		version, f := param(params, "version")
		if f != nil {
			return output{}, f
		}
		if version == nil {
			return output{}, &failure{"Neo.ClientError.Statement.SemanticError", "Cannot merge the following node because of null property value for 'version'"}
		}
		v := g.merge("IndexVersion", map[string]any{"version": version})
		top := int64(0)
		for _, o := range g.find("IndexVersion", nil) {
			if s, ok := o.props["seq"].(int64); ok && o != v && s > top {
				top = s
			}
		}
		if s, ok := v.props["seq"].(int64); !ok || s <= top {
			v.props["seq"] = top + 1
		}
		return written(g)
	}},

	"OPTIONAL MATCH (v:IndexVersion) WITH v ORDER BY v.seq DESC WITH collect(v.version)[..$keep] AS kept MATCH (n) WHERE (n:Page OR n:Chunk) AND (n.version IS NULL OR NOT n.version IN kept) WITH n LIMIT $limit DETACH DELETE n RETURN count(*) AS deleted": {kind: "w", run: func(g *graph, params map[string]any) (output, *failure) {
		keep, f := typedParam[int64](params, "keep")
		if f != nil {
			return output{}, f
		}
		limit, f := typedParam[int64](params, "limit")
		if f != nil {
			return output{}, f
		}
		if keep < 0 || limit < 0 {
			return output{}, &failure{"Neo.ClientError.Statement.ArgumentError", "negative $keep or $limit"}
		}
		kept := newestVersions(g)
		kept = kept[:min(int64(len(kept)), keep)]
		var doomed []*node
		for _, n := range g.nodes {
			if int64(len(doomed)) == limit {
				break
			}
			v, has := n.props["version"]
			if (n.has("Page") || n.has("Chunk")) && (!has || !slices.ContainsFunc(kept, func(k any) bool { return equal(k, v) })) {
				doomed = append(doomed, n)
			}
		}
		if f := g.remove(true, doomed...); f != nil {
			return output{}, f
		}
		return output{fields: []string{"deleted"}, rows: [][]any{{int64(len(doomed))}}}, nil
	}},

	"MATCH (v:IndexVersion) WITH v ORDER BY v.seq DESC SKIP $keep WITH v, v.version AS version DELETE v RETURN version": {kind: "w", run: func(g *graph, params map[string]any) (output, *failure) {
		keep, f := typedParam[int64](params, "keep")
		if f != nil {
			return output{}, f
		}
		if keep < 0 {
			return output{}, &failure{"Neo.ClientError.Statement.ArgumentError", "negative $keep"}
		}
		vs := g.find("IndexVersion", nil)
		slices.SortStableFunc(vs, func(a, b *node) int { return -compare(a.props["seq"], b.props["seq"]) })
		out := output{fields: []string{"version"}}
		if keep >= int64(len(vs)) {
			return out, nil
		}
		for _, v := range vs[keep:] {
			out.rows = append(out.rows, []any{v.props["version"]})
		}
		if f := g.remove(false, vs[keep:]...); f != nil {
			return output{}, f
		}
		return out, nil
	}},

	"MATCH (p:Page {version: $version}) WHERE p.page_id IN $ids RETURN p.page_id AS page_id, p.community_id AS community_id": {kind: "r", run: func(g *graph, params map[string]any) (output, *failure) {
		version, f := param(params, "version")
		if f != nil {
			return output{}, f
		}
		ids, f := typedParam[[]any](params, "ids")
		if f != nil {
			return output{}, f
		}
		out := output{fields: []string{"page_id", "community_id"}}
		for _, p := range g.find("Page", map[string]any{"version": version}) {
			if slices.ContainsFunc(ids, func(id any) bool { return equal(p.props["page_id"], id) }) {
				out.rows = append(out.rows, []any{p.props["page_id"], p.props["community_id"]})
			}
		}
		return out, nil
	}},

	"MATCH (:Page {page_id: $id, version: $version})-[:LINKS_TO]-(q:Page) RETURN DISTINCT q.page_id AS page_id ORDER BY page_id": {kind: "r", run: func(g *graph, params map[string]any) (output, *failure) {
		id, f := param(params, "id")
		if f != nil {
			return output{}, f
		}
		version, f := param(params, "version")
		if f != nil {
			return output{}, f
		}
		var ids []any
		for _, p := range g.find("Page", map[string]any{"page_id": id, "version": version}) {
			for _, r := range g.rels {
				var q *node
				switch {
				case r.typ != "LINKS_TO":
				case r.from == p:
					q = r.to
				case r.to == p:
					q = r.from
				}
				if q != nil && q.has("Page") && !slices.ContainsFunc(ids, func(v any) bool { return equal(v, q.props["page_id"]) || v == nil && q.props["page_id"] == nil }) {
					ids = append(ids, q.props["page_id"])
				}
			}
		}
		slices.SortStableFunc(ids, compare)
		out := output{fields: []string{"page_id"}}
		for _, id := range ids {
			out.rows = append(out.rows, []any{id})
		}
		return out, nil
	}},
}

// mergeChunk is MERGE (p)-[:HAS_CHUNK]->(c:Chunk {chunk_number: number, version: version}).
func mergeChunk(g *graph, p *node, number, version any) *node {
	key := map[string]any{"chunk_number": number, "version": version}
	for _, c := range g.outgoing("HAS_CHUNK", p) {
		if c.has("Chunk") && matches(c, key) {
			return c
		}
	}
	c := g.create("Chunk", key)
	g.link("HAS_CHUNK", p, c)
	return c
}

// newestVersions returns the versions of the IndexVersion nodes, newest (highest seq) first.
func newestVersions(g *graph) []any {
	vs := g.find("IndexVersion", nil)
	slices.SortStableFunc(vs, func(a, b *node) int { return -compare(a.props["seq"], b.props["seq"]) })
	var out []any
	for _, v := range vs {
		if v.props["version"] != nil { // collect skips nulls
			out = append(out, v.props["version"])
		}
	}
	return out
}
