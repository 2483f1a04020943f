package discovery_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/discovery"
)

// coercion is one instance document and what Curator 5.4 (Jackson 2.14 at
// its default settings) makes of it: the instance written back by
// Curator's non-compatible serializer (every field, "enabled" included),
// or nil when Curator refuses the document. The table,
// testdata/jackson-coercions.json, was taken from the jar, and
// TestInteropJacksonCoercions checks it against the jar again.
type coercion struct {
	Name    string  `json:"name"`
	Doc     string  `json:"doc"`
	Curator *string `json:"curator"`
}

func coercions(t *testing.T) []coercion {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "jackson-coercions.json"))
	if err != nil {
		t.Fatal(err)
	}
	var table []coercion
	if err := json.Unmarshal(b, &table); err != nil {
		t.Fatal(err)
	}
	return table
}

// nullStrings is Java's null for a String field: Go reads it as "".
var nullStrings = strings.NewReplacer(`"name":null`, `"name":""`, `"id":null`, `"id":""`, `"value":null`, `"value":""`)

// asCurator writes what Go read as Curator's non-compatible serializer
// writes it, for comparison with the table ("" for a refused document).
func asCurator(t *testing.T, inst discovery.Instance, err error) string {
	t.Helper()
	if err != nil {
		if !strings.Contains(err.Error(), discovery.ErrMalformed.Error()) {
			t.Fatalf("refused without ErrMalformed: %v", err)
		}
		return ""
	}
	if inst.Enabled == nil {
		inst.Enabled = discovery.Bool(true)
	}
	b, err := inst.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (c coercion) want() string {
	if c.Curator == nil {
		return ""
	}
	return nullStrings.Replace(*c.Curator)
}

// Go reads every document of the table as Curator 5.4 does, and refuses
// those Curator refuses: an instance Java clients route to is never hidden
// from Go ones ("port":"8080", "port":8080.0, a string
// registrationTimeUTC...), nor the other way round.
func TestDecodeReadsWhatJacksonReads(t *testing.T) {
	t.Parallel()
	for _, c := range coercions(t) {
		t.Run(c.Name, func(t *testing.T) {
			inst, err := discovery.Decode([]byte(c.Doc))
			if got := asCurator(t, inst, err); got != c.want() {
				t.Fatalf("Decode(%s)\n = %s (%v)\nCurator 5.4 reads\n   %s", c.Doc, got, err, c.want())
			}
		})
	}
}

// The table is what the jar does: each document is written raw to
// ZooKeeper, Curator's ServiceDiscovery reads it there (queryForInstance,
// its default serializer), and our Discovery reads the same node; both
// agree with the table.
func TestInteropJacksonCoercions(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	base := "/interop/" + testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, "")
	java := curatorjava.StartDriver(t, zkAddr)
	java.MustDo(fmt.Sprintf("discovery jd %s true", base))
	d := open(t, c, base)
	for k, cs := range coercions(t) {
		id := fmt.Sprint("i", k)
		if _, err := c.Create(ctx, base+"/svc/"+id, []byte(cs.Doc), framework.CreatingParentContainers()); err != nil {
			t.Fatal(err)
		}
		got := java.MustDo("dread jd svc " + id)
		switch {
		case strings.HasPrefix(got, "error "):
			if cs.Curator != nil {
				t.Errorf("%s: Curator refuses %s (%s); the table says it reads\n %s", cs.Name, cs.Doc, got, *cs.Curator)
			}
		case got == "none":
			t.Fatalf("%s: Curator finds no node", cs.Name)
		default:
			if back := unb64(t, got); cs.Curator == nil || !bytes.Equal(back, []byte(*cs.Curator)) {
				t.Errorf("%s: Curator reads %s as\n %s\nthe table says %v", cs.Name, cs.Doc, back, cs.want())
			}
		}
		inst, err := d.Instance(ctx, "svc", id)
		if got := asCurator(t, inst, err); got != cs.want() {
			t.Errorf("%s: our Discovery reads %s as\n %s (%v)\nCurator\n %s", cs.Name, cs.Doc, got, err, cs.want())
		}
	}
}
