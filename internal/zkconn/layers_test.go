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
// nothing of the floors above it, and recipes build on framework's
// exported API alone, never on the connection layer.
func TestLayers(t *testing.T) {
	for file, imps := range imports(t, ".") {
		for _, p := range imps {
			if p == "framework" || strings.HasPrefix(p, "framework/") || strings.HasPrefix(p, "recipes") || p == "connstate" || p == "retry" {
				t.Errorf("%s imports %s: the connection layer must not import a floor above it", file, p)
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
