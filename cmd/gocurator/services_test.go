package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gocurator/curator/cmd/internal/inspect"
	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/discovery"
)

// javaInstance is what Curator (Java) registers: a POJO payload with its
// "@class" tag and a URI spec, as Curator's compatible serializer reads it.
const javaInstance = `{"name":"orders","id":"java-1","address":"10.0.0.2","port":8080,"sslPort":8443,` +
	`"payload":{"@class":"curatorjava.DiscoveryCommands$Payload","region":"eu","weight":3,"meta":{"a":"b"}},` +
	`"registrationTimeUTC":1700000000123,"serviceType":"DYNAMIC","uriSpec":{"parts":[{"value":"scheme","variable":true},` +
	`{"value":"://","variable":false},{"value":"address","variable":true},{"value":":","variable":false},` +
	`{"value":"port","variable":true}]}}`

// services sets up, under /services of e's chroot, instances registered by
// Curator in Java and by recipes/discovery (one of each service type, a
// Spring Cloud payload), and a node another registrant wrote badly.
func servicesFixture(t *testing.T, e *env) (java *curatorjava.Driver, goInst discovery.Instance, seqNode string) {
	t.Helper()
	ctx := testkit.Ctx(t)
	java = curatorjava.StartDriver(t, e.zk)
	java.MustDo("discovery jd /services true")
	java.MustDo("dregister jd " + base64.StdEncoding.EncodeToString([]byte(javaInstance)))

	d := discovery.New(e.client, "/services")
	t.Cleanup(func() { _ = d.Close(ctx) })
	goInst = discovery.Instance{Name: "orders", ID: "go-1", Address: "10.0.0.1", Port: discovery.Int(9090),
		RegistrationTimeUTC: 1700000000000, URISpec: discovery.DefaultURISpec(),
		Payload: discovery.SpringCloudPayload("orders-1", "orders", map[string]string{"instance_status": "UP"})}
	for _, inst := range []discovery.Instance{
		goInst,
		{Name: "orders", ID: "static-1", Address: "10.0.0.3", Port: discovery.Int(80), ServiceType: discovery.Static},
		{Name: "orders", ID: "seq-", Address: "10.0.0.4", ServiceType: discovery.DynamicSequential, Enabled: discovery.Bool(false)},
		{Name: "billing", ID: "b-1", Address: "10.0.1.1", Port: discovery.Int(7070)},
	} {
		if err := d.Register(ctx, inst); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.client.Create(ctx, "/services/orders/broken", []byte(`{"name":"orders"`)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.client.Delete(ctx, "/services/orders/broken") })
	for _, n := range testkit.Children(t, e.client, "/services/orders") {
		if strings.HasPrefix(n, "seq-") {
			seqNode = "/services/orders/" + n
		}
	}
	return java, goInst, seqNode
}

// services ls and show read what Curator (Java) and recipes/discovery
// register, every field, tied to the owner sessions; a malformed node is
// listed as such and hides nothing.
func TestServicesLsAndShow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, goInst, seqNode := servicesFixture(t, e)
	if seqNode == "" {
		t.Fatal("no DYNAMIC_SEQUENTIAL node")
	}

	var names servicesDoc
	decode(t, e.run("--json", "services", "ls").ok(t).stdout, &names)
	if names.Base != "/services" || len(names.Services) != 2 || names.Services[0] != (serviceSummary{"billing", 1}) ||
		names.Services[1] != (serviceSummary{"orders", 5}) {
		t.Fatalf("services ls --json: %+v", names)
	}
	out := e.run("services", "ls").ok(t).stdout
	if want := "SERVICE  INSTANCES\nbilling  1\norders   5\n"; out != want {
		t.Fatalf("services ls:\n%s\nwant\n%s", out, want)
	}

	var svc serviceDoc
	decode(t, e.run("--json", "services", "ls", "orders").ok(t).stdout, &svc)
	if svc.Service != "orders" || svc.Sessions != "complete" || len(svc.Instances) != 4 || len(svc.Malformed) != 1 ||
		svc.Malformed[0].Node != "/services/orders/broken" || !strings.Contains(svc.Malformed[0].Error, "malformed") {
		t.Fatalf("services ls orders --json: %+v", svc)
	}
	byID := map[string]instanceDoc{}
	for _, d := range svc.Instances {
		inst, err := discovery.Decode(d.Instance)
		if err != nil {
			t.Fatalf("%s: %v", d.Node, err)
		}
		byID[inst.ID] = d
		d.inst = inst
	}
	// Curator's instance: the bytes it wrote, its session, connected.
	j := byID["java-1"]
	data, st, err := e.client.Get(testkit.Ctx(t), "/services/orders/java-1")
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, j.Instance, data) || j.Session != inspect.SessionHex(st.EphemeralOwner) ||
		j.Session == inspect.SessionHex(e.client.SessionID()) || j.Connected != inspect.Connected || j.URI != "https://10.0.0.2:8080" {
		t.Fatalf("Curator's instance %+v (node data %s, owner 0x%x)", j, data, st.EphemeralOwner)
	}
	// Ours: the DYNAMIC one in our session; STATIC has no session;
	// DYNAMIC_SEQUENTIAL under its sequential node name.
	if g := byID["go-1"]; g.Node != "/services/orders/go-1" || g.Session != inspect.SessionHex(e.client.SessionID()) ||
		g.Connected != inspect.Connected || g.URI != "http://10.0.0.1:9090" {
		t.Fatalf("our instance %+v", g)
	}
	if s := byID["static-1"]; s.Session != "" || s.Connected != "" {
		t.Fatalf("static instance %+v, want no session", s)
	}
	if s := byID["seq-"]; s.Node != seqNode {
		t.Fatalf("sequential instance %+v, want node %s", s, seqNode)
	}

	table := e.run("services", "ls", "orders").ok(t).stdout
	for _, want := range []string{
		"/services/orders  4 instances, 1 malformed\n",
		"  ID        ADDRESS   PORT  SSL   TYPE                ENABLED  REGISTERED",
		"java-1    10.0.0.2  8080  8443  DYNAMIC             yes      2023-11-14T22:13:20.123Z",
		"static-1  10.0.0.3  80    -     STATIC              yes",
		"seq-      10.0.0.4  -     -     DYNAMIC_SEQUENTIAL  no",
		"  malformed  /services/orders/broken  ",
	} {
		if !strings.Contains(table, want) {
			t.Fatalf("services ls orders:\n%s\nwant a line with %q", table, want)
		}
	}

	// show: every field, by id, the sequential one too.
	var one instanceDoc
	decode(t, e.run("--json", "services", "show", "orders", "go-1").ok(t).stdout, &one)
	got, err := discovery.Decode(one.Instance)
	if err != nil {
		t.Fatal(err)
	}
	want := goInst
	want.ServiceType = discovery.Dynamic
	if a, b := mustJSON(t, got), mustJSON(t, want); !bytes.Equal(a, b) || one.Sessions != "complete" {
		t.Fatalf("services show --json:\n %s\nwant\n %s", a, b)
	}
	decode(t, e.run("--json", "services", "show", "orders", "seq-").ok(t).stdout, &one)
	if one.Node != seqNode {
		t.Fatalf("show of the sequential instance: node %s, want %s", one.Node, seqNode)
	}
	shown := e.run("services", "show", "orders", "java-1").ok(t).stdout
	for _, want := range []string{
		"service        orders\n", "id             java-1\n", "uri            https://10.0.0.2:8080\n",
		"uri spec       {scheme}://{address}:{port}\n", "ssl port       8443\n",
		"enabled        yes (no \"enabled\" field: Curator's default serializer)\n",
		"payload class  curatorjava.DiscoveryCommands$Payload\n",
		"node           /services/orders/java-1  ephemeral, session " + j.Session + ", connected yes\n",
		"payload\n  {\n    \"@class\": \"curatorjava.DiscoveryCommands$Payload\",\n    \"region\": \"eu\",",
	} {
		if !strings.Contains(shown, want) {
			t.Fatalf("services show orders java-1:\n%s\nwant %q", shown, want)
		}
	}
	// Another base path.
	if _, err := e.client.Create(testkit.Ctx(t), "/other", nil); err != nil {
		t.Fatal(err)
	}
	if out := e.run("services", "--base", "/other", "ls").ok(t).stdout; out != "/other: no service\n" {
		t.Fatalf("an empty base: %q", out)
	}
}

// Mistakes exit 2 (command line) or 1 (nothing there), with one line.
func TestServicesBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := testkit.Ctx(t)
	d := discovery.New(e.client, "/services")
	t.Cleanup(func() { _ = d.Close(ctx) })
	if err := d.Register(ctx, discovery.Instance{Name: "orders", ID: "o-1"}); err != nil {
		t.Fatal(err)
	}
	// Tab completes NAME from the services, ID from the instances.
	for _, tc := range []struct {
		args []string
		want string // the candidates, then cobra's directive line
	}{
		{[]string{"services", "ls", "or"}, "orders\n:4"},
		{[]string{"services", "show", "orders", ""}, "o-1\n:4"},
		{[]string{"services", "ls", "orders", ""}, ":4"},
	} {
		r := e.run(append([]string{"__complete"}, tc.args...)...)
		if got := strings.TrimSpace(r.stdout); r.code != 0 || got != tc.want {
			t.Errorf("complete %v: exit %d, got %q, want %q", tc.args, r.code, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"group alone", []string{"services"}, 2, "gocurator services needs a subcommand: ls, show"},
		{"mistyped", []string{"services", "list"}, 2, `did you mean "gocurator services ls"?`},
		{"show without id", []string{"services", "show", "orders"}, 2, "accepts 2 arg(s), received 1"},
		{"ls with two", []string{"services", "ls", "a", "b"}, 2, "accepts at most 1 arg(s), received 2"},
		{"name with a slash", []string{"services", "ls", "a/b"}, 2, `service "a/b": not a node name`},
		{"bad base", []string{"services", "--base", "services", "ls"}, 2, `--base "services" is not a valid ZooKeeper path`},
		{"unknown flag", []string{"services", "ls", "--nope"}, 2, "unknown flag: --nope"},
		{"no base", []string{"services", "--base", "/nothing", "ls"}, 1, "/nothing: no such node: no service is registered there (see --base)"},
		{"no service", []string{"services", "ls", "billing"}, 1, "/services/billing: no such service (services under /services: orders)"},
		{"no instance", []string{"services", "show", "orders", "o-9"}, 1, `/services/orders: no instance "o-9" (instances: o-1)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.run(tc.args...)
			lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
			if r.code != tc.code || r.stdout != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "gocurator: ") ||
				!strings.Contains(lines[0], tc.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and one line with %q", r.code, r.stdout, r.stderr, tc.code, tc.want)
			}
		})
	}
}

func decode(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("%v in\n%s", err, s)
	}
}

func mustJSON(t *testing.T, inst discovery.Instance) []byte {
	t.Helper()
	b, err := inst.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jsonEqual reports whether a and b are the same JSON text but for
// whitespace.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var ca, cb bytes.Buffer
	if err := json.Compact(&ca, a); err != nil {
		t.Fatal(err)
	}
	if err := json.Compact(&cb, b); err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}
