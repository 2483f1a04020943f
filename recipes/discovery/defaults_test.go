package discovery_test

import (
	"encoding/json"
	"fmt"
	"net"
	"testing"

	"github.com/google/uuid"

	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/discovery"
)

// An instance registered without an id or an address gets Curator's
// builder defaults (a random UUID; this host's first non-loopback
// address), never "address":null or a refusal, and Curator reads both.
func TestRegisterFillsCuratorBuilderDefaults(t *testing.T) {
	t.Parallel()
	ctx := testkit.Ctx(t)
	base := "/interop/" + testkit.Unique(t)
	c := testkit.Connect(t, zkAddr, "")
	d := open(t, c, base)
	java := curatorjava.StartDriver(t, zkAddr)
	java.MustDo(fmt.Sprintf("discovery jd %s true", base))

	// No address: filled, with the id given.
	if err := d.Register(ctx, discovery.Instance{Name: "orders", ID: "given", Port: discovery.Int(8080)}); err != nil {
		t.Fatal(err)
	}
	data, _ := get(t, c, base+"/orders/given")
	var fields map[string]any
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatal(err)
	}
	addr, _ := fields["address"].(string)
	if ip := net.ParseIP(addr); ip == nil || ip.IsLoopback() {
		t.Fatalf("an instance without an address was written with %v: %s", fields["address"], data)
	}

	// No id either: a UUID, reported back.
	inst, err := d.RegisterInstance(ctx, discovery.Instance{Name: "orders", Port: discovery.Int(8081)})
	if err != nil {
		t.Fatalf("Register without an id: %v", err)
	}
	if _, err := uuid.Parse(inst.ID); err != nil || inst.Address != addr {
		t.Fatalf("registered %+v: the id is not a UUID (%v) or the address not %s", inst, err, addr)
	}
	if ids := testkit.Children(t, c, base+"/orders"); len(ids) != 2 {
		t.Fatalf("instances %v", ids)
	}
	stored, err := d.Instance(ctx, "orders", inst.ID)
	if err != nil || stored.Address != addr || stored.RegistrationTimeUTC == 0 {
		t.Fatalf("stored %+v, %v", stored, err)
	}
	for _, id := range []string{"given", inst.ID} {
		got := java.MustDo(fmt.Sprintf("dread jd orders %s", id))
		var back map[string]any
		if err := json.Unmarshal(unb64(t, got), &back); err != nil {
			t.Fatalf("Curator reads %s: %s", id, got)
		}
		if back["id"] != id || back["address"] != addr {
			t.Fatalf("Curator reads %s as %v", id, back)
		}
	}
	if err := d.Unregister(ctx, inst); err != nil {
		t.Fatal(err)
	}
	if st := stat(t, c, base+"/orders/"+inst.ID); st != nil {
		t.Fatal("Unregister of the reported instance left its node")
	}
}
