package discovery_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/gocurator/curator/recipes/discovery"
)

// DecodePayload drops Jackson's type tag: "@class" is not a key of a map
// (or of the map an `any` receives), and a typed array wrapper
// ["class", value] decodes as its value. A struct with a field for the
// tag still gets it.
func TestDecodePayloadDropsJacksonTypeTag(t *testing.T) {
	t.Parallel()
	obj := discovery.Instance{Name: "s", ID: "i",
		Payload: json.RawMessage(`{"@class":"com.example.Meta","zone":"a","weight":3}`)}
	var m map[string]any
	if err := obj.DecodePayload(&m); err != nil {
		t.Fatal(err)
	}
	if want := map[string]any{"zone": "a", "weight": 3.0}; !reflect.DeepEqual(m, want) {
		t.Fatalf("into a map: %v, want %v", m, want)
	}
	var ms map[string]json.RawMessage
	if err := obj.DecodePayload(&ms); err != nil || len(ms) != 2 || ms["@class"] != nil {
		t.Fatalf("into a map of raw values: %v, %v", ms, err)
	}
	var a any
	if err := obj.DecodePayload(&a); err != nil {
		t.Fatal(err)
	}
	if am, ok := a.(map[string]any); !ok || len(am) != 2 || am["@class"] != nil {
		t.Fatalf("into an any: %#v", a)
	}
	var tagged struct {
		Class string `json:"@class"`
		Zone  string `json:"zone"`
	}
	if err := obj.DecodePayload(&tagged); err != nil || tagged.Class != "com.example.Meta" || tagged.Zone != "a" {
		t.Fatalf("into a struct with a field for the tag: %+v, %v", tagged, err)
	}
	arr := discovery.Instance{Name: "s", ID: "i", Payload: json.RawMessage(`["java.util.ArrayList",[1,2]]`)}
	var l []int
	if err := arr.DecodePayload(&l); err != nil || !reflect.DeepEqual(l, []int{1, 2}) {
		t.Fatalf("a typed array into a slice: %v, %v", l, err)
	}
}
