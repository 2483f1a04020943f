package discovery_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/discovery"
)

// payloadClass is the POJO payload of the Java driver (DiscoveryCommands).
const payloadClass = "curatorjava.DiscoveryCommands$Payload"

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func unb64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Curator registers, in both serializer modes, an instance with a POJO
// payload ("@class") and a URI spec; we read every field, and the node
// holds exactly the bytes of the fixture and of our own marshalling.
func TestInteropCuratorRegistersGoReads(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	c := testkit.Connect(t, zkAddr, "")
	java := curatorjava.StartDriver(t, zkAddr)
	fixture, err := os.ReadFile(filepath.Join("testdata", "curator-compatible.json"))
	if err != nil {
		t.Fatal(err)
	}
	enabledFixture, err := os.ReadFile(filepath.Join("testdata", "curator-enabled.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []struct {
		compatible bool
		want       []byte
	}{{true, fixture}, {false, enabledFixture}} {
		t.Run(fmt.Sprint("compatible=", mode.compatible), func(t *testing.T) {
			base := "/interop/" + testkit.Unique(t)
			id := fmt.Sprint("j", mode.compatible)
			java.MustDo(fmt.Sprintf("discovery %s %s %v", id, base, mode.compatible))
			java.MustDo(fmt.Sprintf("dregister %s %s", id, b64(fixture)))
			data, st := get(t, c, base+"/svc/id1")
			if !bytes.Equal(data, mode.want) {
				t.Fatalf("Curator wrote\n %s\nwant\n %s", data, mode.want)
			}
			if st.EphemeralOwner == 0 {
				t.Fatal("Curator's DYNAMIC instance is not ephemeral")
			}
			d := open(t, c, base)
			inst, err := d.Instance(ctx, "svc", "id1")
			if err != nil {
				t.Fatal(err)
			}
			if inst.PayloadClass() != payloadClass || inst.URI(nil) != "https://10.0.0.1:8080/x{y}" ||
				*inst.SSLPort != 8443 || inst.RegistrationTimeUTC != 1700000000123 || inst.ServiceType != discovery.Dynamic {
				t.Fatalf("read %+v", inst)
			}
			if mine, _ := inst.MarshalJSON(); !bytes.Equal(mine, data) {
				t.Fatalf("we write\n %s\nfor Curator's\n %s", mine, data)
			}
			java.MustDo("dclose " + id)
		})
	}
}

// We register; Curator's ServiceDiscovery reads the instance and writes it
// back byte for byte as we wrote it (POJO payload deserialized as its
// class), and its ServiceProvider and ServiceCache pick it.
func TestInteropGoRegistersCuratorReads(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	base := "/interop/" + testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, "")
	java := curatorjava.StartDriver(t, zkAddr)
	java.MustDo(fmt.Sprintf("discovery jd %s true", base))
	java.MustDo(fmt.Sprintf("discovery je %s false", base))
	java.MustDo("dcache jc jd orders")

	// The fields in the POJO's order: Jackson writes them in that order.
	type pojo struct {
		Region string            `json:"region"`
		Weight int               `json:"weight"`
		Meta   map[string]string `json:"meta"`
	}
	payload, err := discovery.TypedPayload(payloadClass, pojo{"eu<1>", 7, map[string]string{"zone": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	inst := discovery.Instance{Name: "orders", ID: "go-1", Address: "10.9.8.7", Port: discovery.Int(8080), SSLPort: discovery.Int(8443),
		Payload: payload, URISpec: discovery.DefaultURISpec()}
	for _, mode := range []struct {
		name   string
		opts   []discovery.Option
		driver string
	}{{"compatible", nil, "jd"}, {"enabled", []discovery.Option{discovery.WithEnabledField()}, "je"}} {
		d := open(t, c, base, mode.opts...)
		t.Run(mode.name, func(t *testing.T) {
			one := inst
			one.ID = "go-" + mode.name
			if err := d.Register(ctx, one); err != nil {
				t.Fatal(err)
			}
			data, _ := get(t, c, base+"/orders/"+one.ID)
			got := java.MustDo(fmt.Sprintf("dinstance %s orders %s", mode.driver, one.ID))
			if got == "none" {
				t.Fatal("Curator does not find our instance")
			}
			if back := unb64(t, got); !bytes.Equal(back, data) {
				t.Fatalf("Curator writes what it read as\n %s\nwe wrote\n %s", back, data)
			}
			if cls := java.MustDo("dclass " + b64(data)); cls != payloadClass {
				t.Fatalf("Curator reads the payload as %s", cls)
			}
			same := java.MustDo(fmt.Sprintf("dserialize %v %s", mode.name == "compatible", b64(data)))
			if !bytes.Equal(unb64(t, same), data) {
				t.Fatalf("Curator's serializer gives\n %s\nfor our\n %s", unb64(t, same), data)
			}
		})
	}
	if err := java.WaitEvent("dcache jc go-compatible,go-enabled", testkit.Deadline); err != nil {
		t.Fatal(err)
	}
	java.MustDo("dprovider jp jd orders roundRobin")
	picked := map[string]bool{}
	for range 4 {
		picked[java.MustDo("dpick jp")] = true
	}
	if !picked["go-compatible"] || !picked["go-enabled"] {
		t.Fatalf("Curator's provider picked %v", picked)
	}
	if got := java.MustDo("dnames jd"); got != "orders" {
		t.Fatalf("Curator's queryForNames = %q", got)
	}
}

// A Java payload with "@class" survives a Go round trip byte for byte: we
// read Curator's instance and register it as ours (another id), and the
// two nodes differ only in the id.
func TestInteropTypedPayloadSurvivesGoRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	base := "/interop/" + testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, "")
	java := curatorjava.StartDriver(t, zkAddr)
	java.MustDo(fmt.Sprintf("discovery jd %s true", base))
	javaJSON := []byte(`{"name":"svc","id":"java","address":"10.0.0.1","port":1,"sslPort":null,"payload":{"@class":"` + payloadClass +
		`","region":"é \u2028 <&>","weight":-3,"meta":{"z":"1","a":"\uD83D\uDE00"}},"registrationTimeUTC":1,"serviceType":"DYNAMIC","uriSpec":null}`)
	java.MustDo("dregister jd " + b64(javaJSON))
	theirs, _ := get(t, c, base+"/svc/java")

	d := open(t, c, base)
	inst, err := d.Instance(ctx, "svc", "java")
	if err != nil {
		t.Fatal(err)
	}
	inst.ID = "go"
	if err := d.Register(ctx, inst); err != nil {
		t.Fatal(err)
	}
	ours, _ := get(t, c, base+"/svc/go")
	if want := bytes.Replace(theirs, []byte(`"id":"java"`), []byte(`"id":"go"`), 1); !bytes.Equal(ours, want) {
		t.Fatalf("our registration\n %s\nCurator's\n %s", ours, theirs)
	}
	if got := unb64(t, java.MustDo("dinstance jd svc go")); !bytes.Equal(got, ours) {
		t.Fatalf("Curator re-serializes ours as\n %s", got)
	}
}
