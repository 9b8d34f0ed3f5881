package neo4jtest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	store "github.com/ragproxy/ragproxy/retrieval/neo4j"
	"github.com/ragproxy/ragproxy/retrieval/neo4j/neo4jtest"
)

func driver(t *testing.T, uri, password string) neo4j.DriverWithContext {
	t.Helper()
	d, err := neo4j.NewDriverWithContext(uri, neo4j.BasicAuth("neo4j", password, ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(context.Background()) })
	return d
}

func run(ctx context.Context, d neo4j.DriverWithContext, st store.Statement) (*neo4j.EagerResult, error) {
	return neo4j.ExecuteQuery(ctx, d, st.Cypher, st.Params, neo4j.EagerResultTransformer)
}

func versions(t *testing.T, d neo4j.DriverWithContext) []string {
	t.Helper()
	res, err := run(context.Background(), d, store.VersionsQuery())
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, r := range res.Records {
		v, _ := r.Get("version")
		out = append(out, v.(string))
	}
	return out
}

// TestHandshake connects the driver to servers speaking different versions, with the legacy and the manifest
// handshake, and checks the version agreed and how the client authenticated (in HELLO before 5.1, with
// LOGON from 5.1).
func TestHandshake(t *testing.T) {
	tests := []struct {
		name  string
		opts  neo4jtest.Options
		want  string
		logon int
	}{
		{"default", neo4jtest.Options{}, "5.8", 1},
		{"5.4 only", neo4jtest.Options{Versions: []neo4jtest.Version{{Major: 5, Minor: 4}}}, "5.4", 1},
		{"5.0: auth in HELLO", neo4jtest.Options{Versions: []neo4jtest.Version{{Major: 5, Minor: 0}}}, "5.0", 0},
		{"4.4", neo4jtest.Options{Versions: []neo4jtest.Version{{Major: 4, Minor: 4}}}, "4.4", 0},
		{"manifest", neo4jtest.Options{Manifest: true, Versions: []neo4jtest.Version{{Major: 5, Minor: 2}, {Major: 5, Minor: 6}}}, "5.6", 1},
		{"manifest 4.4", neo4jtest.Options{Manifest: true, Versions: []neo4jtest.Version{{Major: 4, Minor: 4}}}, "4.4", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.User, tt.opts.Password = "neo4j", "secret"
			f, uri := neo4jtest.NewServer(t, tt.opts)
			d := driver(t, uri, "secret")
			ctx := context.Background()
			res, err := run(ctx, d, store.MarkVersion("v1"))
			if err != nil {
				t.Fatal(err)
			}
			v := res.Summary.Server().ProtocolVersion()
			if got := fmt.Sprintf("%d.%d", v.Major, v.Minor); got != tt.want {
				t.Errorf("protocol %s, want %s", got, tt.want)
			}
			if diff := cmp.Diff([]string{"v1"}, versions(t, d)); diff != "" {
				t.Errorf("versions (-want +got):\n%s", diff)
			}
			if f.Count("HELLO") != 1 || f.Count("LOGON") != tt.logon {
				t.Errorf("HELLO %d, LOGON %d; want 1, %d", f.Count("HELLO"), f.Count("LOGON"), tt.logon)
			}
		})
	}
}

// TestNoCommonVersion: a server that speaks none of the driver's versions refuses the connection.
func TestNoCommonVersion(t *testing.T) {
	for _, manifest := range []bool{false, true} {
		_, uri := neo4jtest.NewServer(t, neo4jtest.Options{Manifest: manifest, Versions: []neo4jtest.Version{{Major: 6, Minor: 0}}})
		if err := driver(t, uri, "").VerifyConnectivity(context.Background()); err == nil {
			t.Errorf("manifest %v: connected to a server of Bolt 6.0 only", manifest)
		}
	}
}

func TestUnauthorized(t *testing.T) {
	for _, v := range []neo4jtest.Version{{Major: 5, Minor: 8}, {Major: 5, Minor: 0}, {Major: 4, Minor: 4}} {
		t.Run(v.String(), func(t *testing.T) {
			_, uri := neo4jtest.NewServer(t, neo4jtest.Options{User: "neo4j", Password: "secret", Versions: []neo4jtest.Version{v}})
			err := driver(t, uri, "wrong").VerifyConnectivity(context.Background())
			var ne *neo4j.Neo4jError
			if !errors.As(err, &ne) || ne.Code != "Neo.ClientError.Security.Unauthorized" {
				t.Errorf("wrong password: %v; want Neo.ClientError.Security.Unauthorized", err)
			}
			if err := driver(t, uri, "secret").VerifyConnectivity(context.Background()); err != nil {
				t.Errorf("right password: %v", err)
			}
		})
	}
}

// TestUnknownStatement: a statement the fake does not know fails as a syntax error, and the connection
// serves the next statement after the driver resets it.
func TestUnknownStatement(t *testing.T) {
	f, uri := neo4jtest.NewServer(t, neo4jtest.Options{})
	d := driver(t, uri, "")
	ctx := context.Background()
	for _, q := range []string{"MATCH (n) RETURN n", "MATCH (v:IndexVersion) RETURN v.version AS version ORDER BY v.seq ASC", "RETURN 1"} {
		_, err := run(ctx, d, store.Statement{Cypher: q})
		var ne *neo4j.Neo4jError
		if !errors.As(err, &ne) || ne.Code != "Neo.ClientError.Statement.SyntaxError" {
			t.Errorf("%q: %v; want Neo.ClientError.Statement.SyntaxError", q, err)
		}
	}
	// The store's statements are known whatever their line breaks and indentation.
	st := store.VersionsQuery()
	st.Cypher = "  " + strings.ReplaceAll(st.Cypher, " ", "\n\t ")
	if _, err := run(ctx, d, st); err != nil {
		t.Errorf("re-indented versions query: %v", err)
	}
	if _, err := run(ctx, d, store.Statement{Cypher: store.FingerprintsQuery("v").Cypher}); err == nil || !strings.Contains(err.Error(), "ParameterMissing") {
		t.Errorf("fingerprints without $version: %v; want ParameterMissing", err)
	}
	if f.Count("RESET") == 0 {
		t.Error("the driver never reset a failed connection")
	}
}

// TestRouting: a neo4j:// driver asks for a routing table (ROUTE) and is sent back to the server itself; a
// bolt:// driver never asks.
func TestRouting(t *testing.T) {
	f, uri := neo4jtest.NewServer(t, neo4jtest.Options{})
	d := driver(t, strings.Replace(uri, "bolt://", "neo4j://", 1), "")
	if _, err := run(context.Background(), d, store.MarkVersion("v1")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"v1"}, versions(t, d)); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}
	if f.Count("ROUTE") == 0 {
		t.Error("the neo4j:// driver sent no ROUTE")
	}
}

// TestTransactions: an explicit transaction's writes are seen only after COMMIT, and ROLLBACK undoes them.
func TestTransactions(t *testing.T) {
	_, uri := neo4jtest.NewServer(t, neo4jtest.Options{})
	d := driver(t, uri, "")
	ctx := context.Background()
	write := func(version string, commit bool) {
		s := d.NewSession(ctx, neo4j.SessionConfig{})
		defer s.Close(ctx)
		tx, err := s.BeginTransaction(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st := store.MarkVersion(version)
		if _, err := tx.Run(ctx, st.Cypher, st.Params); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(versions(t, d), version) {
			t.Errorf("%s is seen outside its transaction before COMMIT", version)
		}
		if commit {
			err = tx.Commit(ctx)
		} else {
			err = tx.Rollback(ctx)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	write("v1", false)
	if got := versions(t, d); len(got) != 0 {
		t.Errorf("after ROLLBACK: %v; want none", got)
	}
	write("v1", true)
	write("v2", true)
	if diff := cmp.Diff([]string{"v2", "v1"}, versions(t, d)); diff != "" {
		t.Errorf("after COMMIT (-want +got):\n%s", diff)
	}
}

// TestConflict: of two transactions writing from the same state, the second to commit fails with a
// transient error, which the driver's managed transactions retry.
func TestConflict(t *testing.T) {
	_, uri := neo4jtest.NewServer(t, neo4jtest.Options{})
	d := driver(t, uri, "")
	ctx := context.Background()
	var txs []neo4j.ExplicitTransaction
	for _, v := range []string{"a", "b"} {
		s := d.NewSession(ctx, neo4j.SessionConfig{})
		defer s.Close(ctx)
		tx, err := s.BeginTransaction(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st := store.MarkVersion(v)
		if _, err := tx.Run(ctx, st.Cypher, st.Params); err != nil {
			t.Fatal(err)
		}
		txs = append(txs, tx)
	}
	if err := txs[0].Commit(ctx); err != nil {
		t.Fatal(err)
	}
	err := txs[1].Commit(ctx)
	var ne *neo4j.Neo4jError
	if !errors.As(err, &ne) || !strings.HasPrefix(ne.Code, "Neo.TransientError.") {
		t.Errorf("second commit: %v; want a transient error", err)
	}
	if diff := cmp.Diff([]string{"a"}, versions(t, d)); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}
}

// TestFetchSize: a result larger than the fetch size comes in batches (has_more), and one left unread is
// discarded.
func TestFetchSize(t *testing.T) {
	f, uri := neo4jtest.NewServer(t, neo4jtest.Options{})
	d := driver(t, uri, "")
	ctx := context.Background()
	for _, v := range []string{"v1", "v2", "v3", "v4", "v5"} {
		if _, err := run(ctx, d, store.MarkVersion(v)); err != nil {
			t.Fatal(err)
		}
	}
	s := d.NewSession(ctx, neo4j.SessionConfig{FetchSize: 2})
	defer s.Close(ctx)
	pulls := f.Count("PULL")
	st := store.VersionsQuery()
	res, err := s.Run(ctx, st.Cypher, nil)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := res.Collect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		v, _ := r.Get("version")
		got = append(got, v.(string))
	}
	if diff := cmp.Diff([]string{"v5", "v4", "v3", "v2", "v1"}, got); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
	}
	if n := f.Count("PULL") - pulls; n != 3 {
		t.Errorf("%d PULLs for 5 records 2 at a time, want 3", n)
	}
	res, err = s.Run(ctx, st.Cypher, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Next(ctx) {
		t.Fatal(res.Err())
	}
	if _, err := res.Consume(ctx); err != nil {
		t.Fatal(err)
	}
	if f.Count("DISCARD") == 0 {
		t.Error("the rest of a result consumed unread was never discarded")
	}
}

// TestUnknownDatabase: a database other than the one the server holds is not found.
func TestUnknownDatabase(t *testing.T) {
	_, uri := neo4jtest.NewServer(t, neo4jtest.Options{})
	d := driver(t, uri, "")
	st := store.VersionsQuery()
	_, err := neo4j.ExecuteQuery(context.Background(), d, st.Cypher, nil, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase("other"))
	var ne *neo4j.Neo4jError
	if !errors.As(err, &ne) || ne.Code != "Neo.ClientError.Database.DatabaseNotFound" {
		t.Errorf("%v; want Neo.ClientError.Database.DatabaseNotFound", err)
	}
	if _, err := neo4j.ExecuteQuery(context.Background(), d, st.Cypher, nil, neo4j.EagerResultTransformer, neo4j.ExecuteQueryWithDatabase("neo4j")); err != nil {
		t.Errorf("database neo4j: %v", err)
	}
}
