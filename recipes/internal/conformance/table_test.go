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
	"multilock": {"MultiLock"},
	"barrier":   {"Barrier", "Double"},
	"atomic":    {"Number", "Value"},
	"shared":    {"Value", "Count"},
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
		methods, options, hasOption := exported(t, filepath.Join("..", "..", pkg), types)
		// A recipe without options (multilock, barrier) declares no
		// Option type; one that declares it and yields no option, or a
		// handle without methods, means the parse is broken.
		if len(methods) == 0 || (hasOption && len(options) == 0) {
			t.Fatalf("%s: found %d methods and %d options (Option type declared: %v): the parse is broken", pkg, len(methods), len(options), hasOption)
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
// exported functions returning Option in the package in dir, and whether
// the package declares a type Option.
func exported(t *testing.T, dir string, types []string) (methods, options []string, hasOption bool) {
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
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				for _, spec := range gd.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok && ts.Name.Name == "Option" {
						hasOption = true
					}
				}
			}
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
			// A generic type's receiver: Number[T].
			switch g := recv.(type) {
			case *ast.IndexExpr:
				recv = g.X
			case *ast.IndexListExpr:
				recv = g.X
			}
			if id, ok := recv.(*ast.Ident); ok && isHandle[id.Name] {
				methods = append(methods, id.Name+"."+fn.Name.Name)
			}
		}
	}
	return methods, options, hasOption
}
