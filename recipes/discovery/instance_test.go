package discovery_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/gocurator/curator/recipes/discovery"
)

// What Curator 5.4's JsonInstanceSerializer wrote (testdata/curator-*.json,
// captured from the Debian jars; interop_test.go checks them against a
// live Curator), and the documented formats of Spring Cloud Zookeeper and
// Dubbo: each must decode to the instance written out here, and that
// instance must marshal to the same bytes.
func TestJSONMatchesCuratorByteForByte(t *testing.T) {
	payload := json.RawMessage(`{"@class":"curatorjava.DiscoveryCommands$Payload","region":"eu","weight":3,"meta":{"a":"b"}}`)
	spec := discovery.MustParseURISpec("{scheme}://{address}:{port}/x{[}y{]}")
	tests := []struct {
		file string
		want discovery.Instance
	}{
		{"curator-compatible.json", discovery.Instance{
			Name: "svc", ID: "id1", Address: "10.0.0.1", Port: discovery.Int(8080), SSLPort: discovery.Int(8443),
			Payload: payload, RegistrationTimeUTC: 1700000000123, ServiceType: discovery.Dynamic, URISpec: spec,
		}},
		{"curator-enabled.json", discovery.Instance{
			Name: "svc", ID: "id1", Address: "10.0.0.1", Port: discovery.Int(8080), SSLPort: discovery.Int(8443),
			Payload: payload, RegistrationTimeUTC: 1700000000123, ServiceType: discovery.Dynamic, URISpec: spec,
			Enabled: discovery.Bool(true),
		}},
		{"curator-nulls.json", discovery.Instance{
			Name: "svc", ID: "id2", RegistrationTimeUTC: 5, ServiceType: discovery.Dynamic,
		}},
		{"curator-escapes.json", discovery.Instance{
			Name: "s", ID: "i", Address: "\x00\x01\b\t\n\f\r\x1f\x7f\u0080\u00ff\U0001F600\uFEFF", Port: discovery.Int(-1),
			Payload:             json.RawMessage(`["java.util.Arrays$ArrayList",[1.5,1.0E20,-0.0,3,true,"x"]]`),
			RegistrationTimeUTC: -1, ServiceType: discovery.Dynamic,
		}},
		{"spring-cloud.json", discovery.Instance{
			Name: "cloud-provider-payment", ID: "6d4e5121-6c17-4023-8f7b-8922f8b70cae", Address: "10.1.2.3", Port: discovery.Int(8005),
			Payload:             discovery.SpringCloudPayload("application-1", "cloud-provider-payment", map[string]string{"instance_status": "UP"}),
			RegistrationTimeUTC: 1610116500446, ServiceType: discovery.Dynamic, URISpec: discovery.DefaultURISpec(),
		}},
		{"dubbo.json", discovery.Instance{
			Name: "dubbo-demo-api-provider", ID: "192.168.1.9:20880", Address: "192.168.1.9", Port: discovery.Int(20880),
			Payload: discovery.DubboPayload("", "dubbo-demo-api-provider", map[string]string{
				"dubbo.endpoints":             `[{"port":20880,"protocol":"dubbo"}]`,
				"dubbo.metadata.revision":     "a662fd2213a8a49dc6ff43a4c2ae7b34",
				"dubbo.metadata.storage-type": "local",
			}),
			RegistrationTimeUTC: 1610526105860, ServiceType: discovery.Dynamic,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := discovery.Decode(data)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Decode:\n got %#v\nwant %#v", got, tt.want)
			}
			again, err := got.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, data) {
				t.Errorf("round trip changed the bytes:\n got %s\nwant %s", again, data)
			}
			built, err := tt.want.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(built, data) {
				t.Errorf("the same instance built in Go marshals differently:\n got %s\nwant %s", built, data)
			}
		})
	}
}

// The typed payload helpers read what Spring Cloud and Dubbo write.
func TestZookeeperInstancePayloads(t *testing.T) {
	for _, tt := range []struct {
		file string
		want discovery.ZookeeperInstance
	}{
		{"spring-cloud.json", discovery.ZookeeperInstance{Class: discovery.SpringCloudClass, ID: "application-1",
			Name: "cloud-provider-payment", Metadata: map[string]string{"instance_status": "UP"}}},
		{"dubbo.json", discovery.ZookeeperInstance{Class: discovery.DubboClass, Name: "dubbo-demo-api-provider",
			Metadata: map[string]string{"dubbo.endpoints": `[{"port":20880,"protocol":"dubbo"}]`,
				"dubbo.metadata.revision": "a662fd2213a8a49dc6ff43a4c2ae7b34", "dubbo.metadata.storage-type": "local"}}},
	} {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			inst, err := discovery.Decode(data)
			if err != nil {
				t.Fatal(err)
			}
			z, err := inst.ZookeeperInstance()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(z, tt.want) {
				t.Errorf("got %#v, want %#v", z, tt.want)
			}
			if got := inst.PayloadClass(); got != tt.want.Class {
				t.Errorf("PayloadClass = %q, want %q", got, tt.want.Class)
			}
		})
	}
}

// Bad input from another registrant decodes to an error wrapping
// ErrMalformed, never a panic nor a half-filled instance.
func TestDecodeMalformed(t *testing.T) {
	for _, tt := range []struct{ name, data string }{
		{"empty", ``},
		{"not JSON", `hello`},
		{"truncated", `{"name":"s","id":"i"`},
		{"array", `[1,2]`},
		{"name of the wrong type", `{"name":{},"id":"i"}`},
		{"port not a number", `{"name":"s","id":"i","port":"eighty"}`},
		{"port in hex", `{"name":"s","id":"i","port":"0x50"}`},
		{"port beyond Java's int", `{"name":"s","id":"i","port":2147483648}`},
		{"unknown service type", `{"name":"s","id":"i","serviceType":"EPHEMERAL"}`},
		{"uriSpec of the wrong shape", `{"name":"s","id":"i","uriSpec":5}`},
		{"enabled not a bool", `{"name":"s","id":"i","enabled":"yes"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inst, err := discovery.Decode([]byte(tt.data))
			if !errors.Is(err, discovery.ErrMalformed) {
				t.Fatalf("Decode(%s) = %+v, %v; want ErrMalformed", tt.data, inst, err)
			}
		})
	}
}

// Fields Curator leaves out or a future version adds do not matter; a
// missing serviceType is ServiceInstance's default, Dynamic. (What Jackson
// coerces, and a missing name or id, are read as Curator reads them:
// TestDecodeReadsWhatJacksonReads.)
func TestDecodeLenient(t *testing.T) {
	inst, err := discovery.Decode([]byte(`{"name":"s","id":"i","future":{"x":[1]},"enabled":false}`))
	if err != nil {
		t.Fatal(err)
	}
	want := discovery.Instance{Name: "s", ID: "i", ServiceType: discovery.Dynamic, Enabled: discovery.Bool(false)}
	if !reflect.DeepEqual(inst, want) || inst.IsEnabled() {
		t.Fatalf("got %#v, want %#v", inst, want)
	}
}

// A payload built in Go is written as Jackson would write it: compact,
// '<', '&' and U+2028 raw, characters beyond U+FFFF as escaped surrogates.
func TestPayloadWrittenAsJacksonWritesIt(t *testing.T) {
	for _, tt := range []struct{ name, payload, want string }{
		{"whitespace", "{ \"a\" : [ 1 , 2 ] }", `{"a":[1,2]}`},
		{"html escapes of encoding/json", `{"s":"\u003ca\u0026b\u003e"}`, `{"s":"<a&b>"}`},
		{"line separator", `{"s":"\u2028"}`, "{\"s\":\"\u2028\"}"},
		{"astral", `{"s":"😀"}`, `{"s":"\uD83D\uDE00"}`},
		{"lower-case escape", `{"s":"\u001f"}`, `{"s":"\u001F"}`},
		{"solidus", `{"s":"\/"}`, `{"s":"/"}`},
		{"numbers as written", `{"n":[1.0E20,-0.0,1e5,12345678901234567890]}`, `{"n":[1.0E20,-0.0,1e5,12345678901234567890]}`},
		{"key order kept", `{"z":1,"a":2,"@class":"x"}`, `{"z":1,"a":2,"@class":"x"}`},
		{"scalar", `"str"`, `"str"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := discovery.Instance{Name: "s", ID: "i", Payload: json.RawMessage(tt.payload)}.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			got, _ := discovery.Decode(b)
			if string(got.Payload) != tt.want {
				t.Fatalf("payload written as %s, want %s", got.Payload, tt.want)
			}
		})
	}
}

func TestTypedPayload(t *testing.T) {
	type weights struct {
		Zone   string `json:"zone"`
		Weight int    `json:"weight"`
	}
	raw, err := discovery.TypedPayload("com.example.Weights", weights{"a<b", 3})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"@class":"com.example.Weights","zone":"a<b","weight":3}`; string(raw) != want {
		t.Fatalf("TypedPayload = %s, want %s", raw, want)
	}
	inst := discovery.Instance{Payload: raw}
	var back weights
	if err := inst.DecodePayload(&back); err != nil || back != (weights{"a<b", 3}) {
		t.Fatalf("DecodePayload = %+v, %v", back, err)
	}
	if raw, err := discovery.TypedPayload("x", struct{}{}); err != nil || string(raw) != `{"@class":"x"}` {
		t.Fatalf("empty object: %s, %v", raw, err)
	}
	if _, err := discovery.TypedPayload("x", []int{1}); !errors.Is(err, discovery.ErrInvalidInstance) {
		t.Fatalf("an array payload: %v, want ErrInvalidInstance", err)
	}
}
