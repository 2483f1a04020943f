package conformance_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// handleTypes are the types docs/handles.md describes, by package.
var handleTypes = map[string][]string{
	"mutex":     {"Mutex"},
	"rwlock":    {"RWLock", "Lock"},
	"semaphore": {"Semaphore", "Lease", "Mutex"},
	"leader":    {"Election", "Term"},
}

// docs/handles.md names every exported method of every handle and hold
// type and every option of every recipe, so that the one table a reader
// looks in matches the code; a verb added without its row fails here.
func TestHandlesTableMatchesCode(t *testing.T) {
	table, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "handles.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Names as the table writes them: `Name(...)`, `Name`, or
	// `pkg.Type`'s `(*T).Name`.
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`[^`]*`").FindAllString(string(table), -1) {
		for _, w := range regexp.MustCompile(`[A-Z][A-Za-z0-9]*`).FindAllString(m, -1) {
			named[w] = true
		}
	}
	for pkg, types := range handleTypes {
		methods, options := exported(t, filepath.Join("..", "..", pkg), types)
		if len(methods) == 0 || len(options) == 0 {
			t.Fatalf("%s: found %d methods and %d options: the parse is broken", pkg, len(methods), len(options))
		}
		for _, m := range methods {
			if !named[m[strings.Index(m, ".")+1:]] {
				t.Errorf("docs/handles.md does not name %s.%s", pkg, m)
			}
		}
		for _, o := range options {
			if !named[o] {
				t.Errorf("docs/handles.md does not name the option %s.%s", pkg, o)
			}
		}
	}
}

// exported returns the exported methods ("Type.Method") of types and the
// exported functions returning Option in the package in dir.
func exported(t *testing.T, dir string, types []string) (methods, options []string) {
	t.Helper()
	isHandle := map[string]bool{}
	for _, ty := range types {
		isHandle[ty] = true
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() {
				continue
			}
			if fn.Recv == nil {
				if r := fn.Type.Results; r != nil && len(r.List) == 1 {
					if id, ok := r.List[0].Type.(*ast.Ident); ok && id.Name == "Option" {
						options = append(options, fn.Name.Name)
					}
				}
				continue
			}
			recv := fn.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			if id, ok := recv.(*ast.Ident); ok && isHandle[id.Name] {
				methods = append(methods, id.Name+"."+fn.Name.Name)
			}
		}
	}
	return methods, options
}
