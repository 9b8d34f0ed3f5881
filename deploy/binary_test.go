package deploy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// envReaders are the functions of cmd/ragproxy that read an environment variable named by their first argument.
var envReaders = map[string]bool{"envOr": true, "envInt": true, "envDuration": true, "envBool": true, "envFloat": true,
	"os.Getenv": true, "os.LookupEnv": true}

// binaryEnv is what the binary reads from its environment, found in cmd's source (flags and environment are
// read there only): the variables, and for each flag that falls back to one, the flag's name with its variable.
type binaryEnv struct {
	vars  map[string]bool
	flags map[string]map[string]bool // environment variable -> flag names ("listen", no dashes)
}

// readBinaryEnv parses every non-test Go file under ../cmd.
func readBinaryEnv(t *testing.T) binaryEnv {
	t.Helper()
	be := binaryEnv{vars: map[string]bool{}, flags: map[string]map[string]bool{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir("../cmd", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if name := envRead(call); name != "" {
				be.vars[name] = true
			}
			// fs.StringVar(&x, "flag", envOr("ENV", ...), ...) and fs.String("flag", envOr("ENV", ...), ...).
			for i := 0; i+1 < len(call.Args); i++ {
				flagName, ok := stringLit(call.Args[i])
				if !ok {
					continue
				}
				if next, ok := call.Args[i+1].(*ast.CallExpr); ok {
					if env := envRead(next); env != "" {
						if be.flags[env] == nil {
							be.flags[env] = map[string]bool{}
						}
						be.flags[env][flagName] = true
					}
				}
				break
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(be.vars) < 20 {
		t.Fatalf("found %d environment variables in ../cmd; the scan no longer sees how they are read", len(be.vars))
	}
	return be
}

// envRead returns the variable a call of one of envReaders reads, or "".
func envRead(call *ast.CallExpr) string {
	var fn string
	switch f := call.Fun.(type) {
	case *ast.Ident:
		fn = f.Name
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok {
			fn = x.Name + "." + f.Sel.Name
		}
	}
	if !envReaders[fn] || len(call.Args) == 0 {
		return ""
	}
	s, _ := stringLit(call.Args[0])
	return s
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// runtimeEnv are variables the deployment files set for the Go runtime, not for ragproxy's flags.
var runtimeEnv = map[string]bool{"GOMEMLIMIT": true}
