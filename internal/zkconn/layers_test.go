package zkconn

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/gocurator/curator"

// imports returns the module-local imports of every Go file under dir
// (tests included), by file.
func imports(t *testing.T, dir string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, module+"/") {
				out[path] = append(out[path], strings.TrimPrefix(p, module+"/"))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The layers hold (docs/design.md, "Layers"): the connection layer imports
// nothing of the floors above it, nor do the other parts of framework
// under internal/, and recipes build on framework's exported API alone,
// never on the connection layer.
func TestLayers(t *testing.T) {
	for file, imps := range imports(t, ".") {
		for _, p := range imps {
			if p == "framework" || strings.HasPrefix(p, "framework/") || strings.HasPrefix(p, "recipes") || p == "connstate" || p == "retry" {
				t.Errorf("%s imports %s: the connection layer must not import a floor above it", file, p)
			}
		}
	}
	// framework's own parts under internal/ (the packages it imports, in
	// their non-test files) sit below it too.
	below := map[string]bool{}
	for file, imps := range imports(t, filepath.Join("..", "..", "framework")) {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		for _, p := range imps {
			if strings.HasPrefix(p, "internal/") {
				below[p] = true
			}
		}
	}
	if !below["internal/zkconn"] || len(below) < 5 {
		t.Fatalf("framework's internal imports %v: the test looks in the wrong place", below)
	}
	for pkg := range below {
		for file, imps := range imports(t, filepath.Join("..", "..", pkg)) {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			for _, p := range imps {
				if p == "framework" || strings.HasPrefix(p, "recipes") {
					t.Errorf("%s imports %s: framework's parts must not import a floor above them", file, p)
				}
			}
		}
	}
	recipes := imports(t, filepath.Join("..", "..", "recipes"))
	if len(recipes) == 0 {
		t.Fatal("no recipe files found: the test looks in the wrong place")
	}
	for file, imps := range recipes {
		for _, p := range imps {
			if p == "internal/zkconn" || p == "internal/zkwire" {
				t.Errorf("%s imports %s: recipes use framework's exported API only", file, p)
			}
		}
	}
}
