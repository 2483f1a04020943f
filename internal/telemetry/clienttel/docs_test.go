package clienttel

import (
	"os"
	"strings"
	"testing"
)

// The operation attribute's values are what dashboards group by: the
// observability guide must name every one the client records.
func TestObservabilityDocNamesEveryOperation(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range opNames {
		if !strings.Contains(string(doc), "`"+op+"`") {
			t.Errorf("docs/observability.md does not name the operation %q", op)
		}
	}
}
