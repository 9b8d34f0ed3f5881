// Package neo4jtest serves an in-memory Neo4j over the Bolt protocol on a loopback port for tests: the official
// Go driver connects to it as to a server (version handshake, chunked PackStream messages, HELLO and LOGON,
// auto-commit and explicit transactions, routing tables), so tests of ragproxy's Neo4j store run the driver's
// real wire protocol without a Neo4j server. Behind the wire a small graph executes the Cypher statements the
// store sends, recognised by their text; any other statement fails with Neo.ClientError.Statement.SyntaxError,
// so a store change that sends a new statement shows up in the tests until the fake learns it.
//
// The protocol follows the Bolt specification (neo4j.com/docs/bolt/current/bolt/): versions 4.4 and 5.0 to 5.8,
// with the legacy handshake or, when asked, the manifest handshake of Bolt 5.7+. A Server is safe for
// concurrent use.
package neo4jtest

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"strconv"
	"sync"
	"testing"
)

// Version is a Bolt protocol version.
type Version struct{ Major, Minor byte }

// String returns the version as "5.4".
func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Options configures a Server; the zero value accepts any credentials and every version it speaks.
type Options struct {
	// User and Password are the credentials the server accepts with the "basic" scheme; with no Password
	// authentication is disabled, as on a server with dbms.security.auth_enabled=false.
	User, Password string
	// Versions are the protocol versions the server accepts, most preferred first. Default 5.8 down to 5.0,
	// then 4.4.
	Versions []Version
	// Manifest makes the server answer a client that offers it with the manifest handshake (Bolt 5.7+),
	// listing Versions; otherwise it answers with one version, as servers before Neo4j 5.23 do.
	Manifest bool
}

// Bolt message tags (Bolt specification, "Message").
const (
	msgHello    = 0x01
	msgGoodbye  = 0x02
	msgReset    = 0x0F
	msgRun      = 0x10
	msgBegin    = 0x11
	msgCommit   = 0x12
	msgRollback = 0x13
	msgDiscard  = 0x2F
	msgPull     = 0x3F
	msgRoute    = 0x66
	msgLogon    = 0x6A
	msgLogoff   = 0x6B
	msgSuccess  = 0x70
	msgRecord   = 0x71
	msgIgnored  = 0x7E
	msgFailure  = 0x7F
)

var messageNames = map[byte]string{
	msgHello: "HELLO", msgGoodbye: "GOODBYE", msgReset: "RESET", msgRun: "RUN", msgBegin: "BEGIN",
	msgCommit: "COMMIT", msgRollback: "ROLLBACK", msgDiscard: "DISCARD", msgPull: "PULL", msgRoute: "ROUTE",
	msgLogon: "LOGON", msgLogoff: "LOGOFF",
}

// database is the one database the server holds, also the default one.
const database = "neo4j"

// maxMessage bounds a message the server reads, so that a broken client cannot make it allocate without end.
const maxMessage = 64 << 20

// Server is an in-memory Neo4j speaking Bolt.
type Server struct {
	opts Options
	addr string

	mu       sync.Mutex
	graph    *graph
	gen      uint64         // commits that changed the graph, for bookmarks and conflicting transactions
	messages map[string]int // message name -> number received
	connID   int
}

// NewServer serves a Server on a loopback port for the test's lifetime and returns it with its bolt:// URI.
func NewServer(tb testing.TB, opts Options) (*Server, string) {
	tb.Helper()
	if len(opts.Versions) == 0 {
		opts.Versions = []Version{{5, 8}, {5, 7}, {5, 6}, {5, 5}, {5, 4}, {5, 3}, {5, 2}, {5, 1}, {5, 0}, {4, 4}}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{opts: opts, addr: l.Addr().String(), graph: newGraph(), messages: map[string]int{}}
	var (
		wg    sync.WaitGroup
		cmu   sync.Mutex
		conns = map[net.Conn]bool{}
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return // the listener is closed
			}
			cmu.Lock()
			conns[c] = true
			cmu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.serve(c)
				c.Close()
				cmu.Lock()
				delete(conns, c)
				cmu.Unlock()
			}()
		}
	}()
	tb.Cleanup(func() {
		l.Close()
		cmu.Lock()
		for c := range conns {
			c.Close()
		}
		cmu.Unlock()
		wg.Wait()
	})
	return s, "bolt://" + s.addr
}

// Count returns how many messages of a kind ("HELLO", "LOGON", "RUN", "BEGIN", "ROUTE", ...) the server has
// received.
func (s *Server) Count(message string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.messages[message]
}

// failure is a Neo4j error as a FAILURE message carries it.
type failure struct{ code, message string }

// conn is one client connection's protocol state.
type conn struct {
	s       *Server
	rw      *bufio.ReadWriter
	version Version
	id      string
	hello   bool
	authed  bool
	failed  bool // a FAILURE was sent: everything but RESET and GOODBYE is IGNORED
	tx      *tx
	results []*result // open results: the one auto-commit result, or a transaction's by qid
}

// tx is an explicit transaction: statements run on a copy of the graph, installed by COMMIT.
type tx struct {
	g     *graph
	base  uint64 // the server's gen at BEGIN
	wrote bool
	qids  int64
}

// result is a statement's records not pulled yet.
type result struct {
	qid      int64
	fields   []string
	rows     [][]any
	kind     string // "r", "w", "rw" or "s", the statement type SUCCESS reports
	bookmark string // an auto-commit result's, sent with its last SUCCESS
}

func (s *Server) serve(nc net.Conn) {
	c := &conn{s: s, rw: bufio.NewReadWriter(bufio.NewReader(nc), bufio.NewWriter(nc))}
	v, ok := c.handshake()
	if !ok {
		return
	}
	c.version = v
	s.mu.Lock()
	s.connID++
	c.id = "bolt-" + strconv.Itoa(s.connID)
	s.mu.Unlock()
	for {
		msg, err := readMessage(c.rw.Reader)
		if err != nil {
			return
		}
		v, rest, err := Decode(msg)
		st, isStruct := v.(Structure)
		if err != nil || len(rest) != 0 || !isStruct {
			return // not a message: a real server closes the connection too
		}
		if !c.handle(st) {
			c.rw.Flush()
			return
		}
		if c.rw.Reader.Buffered() == 0 { // the driver pipelines; answer a batch at once
			if c.rw.Flush() != nil {
				return
			}
		}
	}
}

// handshake reads the magic and four proposals, and answers with the version chosen, or with the manifest
// of the versions the server speaks and reads the client's choice.
func (c *conn) handshake() (Version, bool) {
	var hs [20]byte
	if _, err := io.ReadFull(c.rw, hs[:]); err != nil || binary.BigEndian.Uint32(hs[:4]) != 0x6060B017 {
		return Version{}, false
	}
	type proposal struct{ major, minor, back byte }
	var props []proposal
	manifest := false
	for i := 4; i < 20; i += 4 {
		p := proposal{major: hs[i+3], minor: hs[i+2], back: hs[i+1]}
		if p.major == 0xFF && p.minor == 0x01 {
			manifest = true
			continue
		}
		props = append(props, p)
	}
	if manifest && c.s.opts.Manifest {
		out := []byte{0, 0, 0x01, 0xFF}
		out = binary.AppendUvarint(out, uint64(len(c.s.opts.Versions)))
		for _, v := range c.s.opts.Versions {
			out = append(out, 0, 0, v.Minor, v.Major)
		}
		out = binary.AppendUvarint(out, 0) // no capabilities
		if _, err := c.rw.Write(out); err != nil || c.rw.Flush() != nil {
			return Version{}, false
		}
		var chosen [4]byte
		if _, err := io.ReadFull(c.rw, chosen[:]); err != nil {
			return Version{}, false
		}
		if _, err := binary.ReadUvarint(c.rw); err != nil {
			return Version{}, false
		}
		v := Version{Major: chosen[3], Minor: chosen[2]}
		for _, ok := range c.s.opts.Versions {
			if ok == v {
				return v, true
			}
		}
		return Version{}, false // 0.0: the client found none it speaks
	}
	for _, v := range c.s.opts.Versions {
		for _, p := range props {
			if p.major == v.Major && v.Minor <= p.minor && int(v.Minor) >= int(p.minor)-int(p.back) {
				_, err := c.rw.Write([]byte{0, 0, v.Minor, v.Major})
				return v, err == nil && c.rw.Flush() == nil
			}
		}
	}
	c.rw.Write([]byte{0, 0, 0, 0})
	c.rw.Flush()
	return Version{}, false
}

// readMessage reads one chunked message: chunks of a 16-bit size and that many bytes, ended by an empty
// chunk. Empty chunks before a message are keep-alives (NOOP).
func readMessage(r *bufio.Reader) ([]byte, error) {
	var msg []byte
	for {
		var h [2]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return nil, err
		}
		n := int(binary.BigEndian.Uint16(h[:]))
		if n == 0 {
			if len(msg) == 0 {
				continue
			}
			return msg, nil
		}
		if len(msg)+n > maxMessage {
			return nil, errors.New("neo4jtest: message too large")
		}
		start := len(msg)
		msg = append(msg, make([]byte, n)...)
		if _, err := io.ReadFull(r, msg[start:]); err != nil {
			return nil, err
		}
	}
}

// send writes one message in chunks of at most 65,535 bytes.
func (c *conn) send(tag byte, fields ...any) {
	body, err := Encode(nil, Structure{Tag: tag, Fields: fields})
	if err != nil {
		panic(err) // the fake built a value PackStream cannot carry: a bug in the fake
	}
	for len(body) > 0 {
		n := min(len(body), 0xFFFF)
		c.rw.Write(binary.BigEndian.AppendUint16(nil, uint16(n)))
		c.rw.Write(body[:n])
		body = body[n:]
	}
	c.rw.Write([]byte{0, 0})
}

func (c *conn) success(meta map[string]any) { c.send(msgSuccess, meta) }

// fail sends a FAILURE and enters the failed state, rolling back an open transaction. Bolt 5.7 names the
// Neo4j code neo4j_code and adds a GQL status; older versions call it code.
func (c *conn) fail(f *failure) {
	meta := map[string]any{"message": f.message}
	if c.version.Major == 5 && c.version.Minor >= 7 {
		meta["neo4j_code"] = f.code
		meta["gql_status"] = "50N42"
		meta["description"] = "error: general processing exception - unexpected error. " + f.message
	} else {
		meta["code"] = f.code
	}
	c.send(msgFailure, meta)
	c.failed, c.tx, c.results = true, nil, nil
}

// handle answers one message and reports whether the connection stays open.
func (c *conn) handle(m Structure) bool {
	name, known := messageNames[m.Tag]
	if !known {
		name = fmt.Sprintf("0x%02X", m.Tag)
	}
	c.s.mu.Lock()
	c.s.messages[name]++
	c.s.mu.Unlock()
	if !known {
		c.fail(&failure{"Neo.ClientError.Request.Invalid", "message " + name + " is not supported"})
		return false
	}
	switch {
	case m.Tag == msgGoodbye:
		return false
	case m.Tag == msgReset:
		c.failed, c.tx, c.results = false, nil, nil
		c.success(map[string]any{})
		return true
	case c.failed:
		c.send(msgIgnored)
		return true
	case m.Tag == msgHello:
		return c.onHello(m)
	case m.Tag == msgLogon || m.Tag == msgLogoff:
		if !c.hello || !c.logonVersion() {
			c.fail(&failure{"Neo.ClientError.Request.Invalid", name + " is not allowed here"})
			return false
		}
		if m.Tag == msgLogoff {
			c.authed = false
			c.success(map[string]any{})
			return true
		}
		return c.authenticate(m)
	case !c.authed:
		c.fail(&failure{"Neo.ClientError.Security.Unauthorized", name + " before authentication"})
		return false
	}
	switch m.Tag {
	case msgRun:
		c.onRun(m)
	case msgPull, msgDiscard:
		c.onPull(m)
	case msgBegin:
		c.onBegin(m)
	case msgCommit:
		c.onCommit()
	case msgRollback:
		if c.tx == nil {
			c.fail(&failure{"Neo.ClientError.Request.Invalid", "ROLLBACK outside a transaction"})
			return true
		}
		c.tx, c.results = nil, nil
		c.success(map[string]any{})
	case msgRoute:
		c.success(map[string]any{"rt": map[string]any{"ttl": int64(300), "db": database, "servers": []any{
			map[string]any{"role": "ROUTE", "addresses": []string{c.s.addr}},
			map[string]any{"role": "READ", "addresses": []string{c.s.addr}},
			map[string]any{"role": "WRITE", "addresses": []string{c.s.addr}},
		}}})
	}
	return true
}

// logonVersion reports whether the version authenticates with LOGON (5.1+) rather than in HELLO.
func (c *conn) logonVersion() bool {
	return c.version.Major > 5 || c.version.Major == 5 && c.version.Minor >= 1
}

func (c *conn) onHello(m Structure) bool {
	extra, ok := field[map[string]any](m, 0)
	if c.hello || !ok {
		c.fail(&failure{"Neo.ClientError.Request.Invalid", "invalid HELLO"})
		return false
	}
	c.hello = true
	if !c.logonVersion() && !c.check(extra) {
		return false
	}
	c.success(map[string]any{"server": "Neo4j/5.26.0", "connection_id": c.id, "hints": map[string]any{}})
	return true
}

func (c *conn) authenticate(m Structure) bool {
	token, ok := field[map[string]any](m, 0)
	if !ok {
		c.fail(&failure{"Neo.ClientError.Request.Invalid", "invalid LOGON"})
		return false
	}
	if !c.check(token) {
		return false
	}
	c.success(map[string]any{})
	return true
}

// check authenticates with a token (scheme, principal, credentials); on failure it answers and the
// connection closes, as Neo4j's does.
func (c *conn) check(token map[string]any) bool {
	if c.s.opts.Password == "" {
		c.authed = true
		return true
	}
	if token["scheme"] == "basic" && token["principal"] == c.s.opts.User && token["credentials"] == c.s.opts.Password {
		c.authed = true
		return true
	}
	c.fail(&failure{"Neo.ClientError.Security.Unauthorized", "The client is unauthorized due to authentication failure."})
	return false
}

// field returns a message's i-th field as a T.
func field[T any](m Structure, i int) (T, bool) {
	var zero T
	if i >= len(m.Fields) {
		return zero, false
	}
	v, ok := m.Fields[i].(T)
	return v, ok
}

// checkDatabase refuses a database the server does not hold, from RUN's or BEGIN's extra.
func checkDatabase(extra map[string]any) *failure {
	if db, ok := extra["db"]; ok && db != database {
		return &failure{"Neo.ClientError.Database.DatabaseNotFound", fmt.Sprintf("Database does not exist. Database name: '%v'.", db)}
	}
	return nil
}

func (c *conn) onBegin(m Structure) {
	extra, ok := field[map[string]any](m, 0)
	if !ok || c.tx != nil || len(c.results) > 0 {
		c.fail(&failure{"Neo.ClientError.Request.Invalid", "BEGIN is not allowed here"})
		return
	}
	if f := checkDatabase(extra); f != nil {
		c.fail(f)
		return
	}
	c.s.mu.Lock()
	c.tx = &tx{g: c.s.graph.clone(), base: c.s.gen}
	c.s.mu.Unlock()
	c.success(map[string]any{})
}

func (c *conn) onCommit() {
	if c.tx == nil {
		c.fail(&failure{"Neo.ClientError.Request.Invalid", "COMMIT outside a transaction"})
		return
	}
	t := c.tx
	c.s.mu.Lock()
	if t.wrote && c.s.gen != t.base {
		c.s.mu.Unlock()
		// Another transaction committed changes since BEGIN; Neo4j would have locked, the fake refuses
		// with an error the driver retries.
		c.fail(&failure{"Neo.TransientError.Transaction.DeadlockDetected", "the graph changed since the transaction began"})
		return
	}
	if t.wrote {
		c.s.graph = t.g
		c.s.gen++
	}
	bookmark := c.s.bookmark()
	c.s.mu.Unlock()
	c.tx, c.results = nil, nil
	c.success(map[string]any{"bookmark": bookmark})
}

// bookmark names the graph's state; the caller holds s.mu.
func (s *Server) bookmark() string { return "FB:neo4jtest:" + strconv.FormatUint(s.gen, 10) }

func (c *conn) onRun(m Structure) {
	query, ok1 := field[string](m, 0)
	params, ok2 := field[map[string]any](m, 1)
	extra, ok3 := field[map[string]any](m, 2)
	if !ok1 || !ok2 || !ok3 || c.tx == nil && len(c.results) > 0 {
		c.fail(&failure{"Neo.ClientError.Request.Invalid", "RUN is not allowed here"})
		return
	}
	if f := checkDatabase(extra); f != nil {
		c.fail(f)
		return
	}
	st, f := lookup(query)
	if f != nil {
		c.fail(f)
		return
	}
	r := &result{qid: -1, kind: st.kind}
	if c.tx != nil {
		out, err := st.run(c.tx.g, params)
		if err != nil {
			c.fail(err)
			return
		}
		c.tx.wrote = c.tx.wrote || st.kind != "r"
		r.fields, r.rows, r.qid = out.fields, out.rows, c.tx.qids
		c.tx.qids++
	} else {
		c.s.mu.Lock()
		g := c.s.graph.clone()
		out, err := st.run(g, params)
		if err == nil {
			if st.kind != "r" {
				c.s.graph = g
				c.s.gen++
			}
			r.bookmark = c.s.bookmark()
		}
		c.s.mu.Unlock()
		if err != nil {
			c.fail(err)
			return
		}
		r.fields, r.rows = out.fields, out.rows
	}
	c.results = append(c.results, r)
	meta := map[string]any{"fields": r.fields, "t_first": int64(0)}
	if r.qid >= 0 {
		meta["qid"] = r.qid
	}
	c.success(meta)
}

// onPull answers PULL and DISCARD {n, qid}: n records (all for -1) of the result qid (the last one for -1).
func (c *conn) onPull(m Structure) {
	extra, ok := field[map[string]any](m, 0)
	n, nok := extra["n"].(int64)
	qid, qok := extra["qid"].(int64)
	if _, has := extra["qid"]; !has {
		qid, qok = -1, true
	}
	if !ok || !nok || !qok || n == 0 || n < -1 {
		c.fail(&failure{"Neo.ClientError.Request.Invalid", "invalid n or qid"})
		return
	}
	at := -1
	for i, r := range c.results {
		if r.qid == qid || qid == -1 && i == len(c.results)-1 {
			at = i
		}
	}
	if at < 0 {
		c.fail(&failure{"Neo.ClientError.Request.Invalid", "no result to pull"})
		return
	}
	r := c.results[at]
	k := len(r.rows)
	if n >= 0 && int(n) < k {
		k = int(n)
	}
	if m.Tag == msgPull {
		for _, row := range r.rows[:k] {
			c.send(msgRecord, row)
		}
	}
	r.rows = r.rows[k:]
	if len(r.rows) > 0 {
		c.success(map[string]any{"has_more": true})
		return
	}
	c.results = append(c.results[:at], c.results[at+1:]...)
	meta := map[string]any{"type": r.kind, "t_last": int64(0), "db": database}
	if r.bookmark != "" {
		meta["bookmark"] = r.bookmark
	}
	c.success(meta)
}

// Nodes returns a copy of the properties of each node with label, in creation order.
func (s *Server) Nodes(label string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, n := range s.graph.find(label, nil) {
		out = append(out, maps.Clone(n.props))
	}
	return out
}

// Relationships returns a copy of the properties of the two ends of each relationship of typ, in creation
// order.
func (s *Server) Relationships(typ string) [][2]map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out [][2]map[string]any
	for _, r := range s.graph.rels {
		if r.typ == typ {
			out = append(out, [2]map[string]any{maps.Clone(r.from.props), maps.Clone(r.to.props)})
		}
	}
	return out
}

// AddNode adds a node with one label, as an earlier writer (another release, another tool) may have left it.
func (s *Server) AddNode(label string, props map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.graph.create(label, props)
	s.gen++
}
