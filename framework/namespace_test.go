package framework

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/go-zookeeper/zk"
)

// Every operation runs under the chroot and namespace, and every path that
// comes back (created names, watch events, transaction results) has them
// stripped. raw sees the server's real paths.
func TestNamespaceAndChroot(t *testing.T) {
	tests := []struct {
		name      string
		chroot    string // appended to the connect string
		namespace string
	}{
		{"namespace", "", "app"},
		{"nested namespace", "", "app/sub"},
		{"chroot", "/chroot", ""},
		{"chroot and namespace", "/chroot", "app"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := server(t)
			raw := connect(t, srv.ConnectString())
			ctx := testCtx(t)
			// A fresh top-level node per case, so cases do not share paths.
			top := "/" + newNamespace(t)
			chroot, ns := "", ""
			if tt.chroot != "" {
				chroot = top + tt.chroot
			}
			if tt.namespace != "" {
				ns = tt.namespace
				if chroot == "" {
					ns = top[1:] + "/" + tt.namespace
				}
			}
			prefix := chroot
			if ns != "" {
				prefix += "/" + ns
			}
			opts := []Option{}
			if ns != "" {
				opts = append(opts, WithNamespace(ns))
			}
			c := connect(t, srv.ConnectString()+chroot, opts...)
			if c.Namespace() != ns {
				t.Fatalf("Namespace() = %q, want %q", c.Namespace(), ns)
			}
			onServer := func(p string) string {
				if p == "/" {
					return prefix
				}
				return prefix + p
			}
			mustExist := func(p string) *zk.Stat {
				t.Helper()
				st, err := raw.Exists(ctx, onServer(p))
				if err != nil || st == nil {
					t.Fatalf("server path %s: stat %v, err %v", onServer(p), st, err)
				}
				return st
			}
			mustNotExist := func(p string) {
				t.Helper()
				st, err := raw.Exists(ctx, onServer(p))
				if err != nil || st != nil {
					t.Fatalf("server path %s should not exist: stat %v, err %v", onServer(p), st, err)
				}
			}

			// create: the chroot and namespace are made on demand.
			got, err := c.Create(ctx, "/a", []byte("one"))
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if got != "/a" {
				t.Fatalf("Create returned %q, want /a", got)
			}
			mustExist("/a")
			seq, err := c.Create(ctx, "/a/s-", nil, WithMode(PersistentSequential))
			if err != nil {
				t.Fatal(err)
			}
			if _, name := SplitPath(seq); !strings.HasPrefix(seq, "/a/") || !hasSeq(name, "s-") {
				t.Fatalf("sequential create returned %q, want /a/s-<10 digits>", seq)
			}
			mustExist(seq)
			prot, err := c.Create(ctx, "/a/p-", nil, WithMode(EphemeralSequential), Protected())
			if err != nil {
				t.Fatal(err)
			}
			if _, name := SplitPath(prot); !strings.HasPrefix(prot, "/a/") || !IsProtected(name) || !hasSeq(StripProtected(name), "p-") {
				t.Fatalf("protected sequential create returned %q", prot)
			}
			mustExist(prot)
			deep, err := c.Create(ctx, "/x/y/z", nil, CreatingParents())
			if err != nil || deep != "/x/y/z" {
				t.Fatalf("Create with parents = %q, %v", deep, err)
			}
			mustExist("/x/y")

			// get / set / exists / children.
			data, st, err := c.Get(ctx, "/a")
			if err != nil || string(data) != "one" {
				t.Fatalf("Get = %q, %v", data, err)
			}
			if rawSt := mustExist("/a"); rawSt.Czxid != st.Czxid {
				t.Fatalf("Get read another node: czxid %d, server's %d", st.Czxid, rawSt.Czxid)
			}
			if _, err := c.Set(ctx, "/a", []byte("two"), st.Version); err != nil {
				t.Fatal(err)
			}
			if data, _, err := raw.Get(ctx, onServer("/a")); err != nil || string(data) != "two" {
				t.Fatalf("server data after Set = %q, %v", data, err)
			}
			if st, err := c.Exists(ctx, "/a"); err != nil || st == nil {
				t.Fatalf("Exists(/a) = %v, %v", st, err)
			}
			if st, err := c.Exists(ctx, "/nope"); err != nil || st != nil {
				t.Fatalf("Exists(/nope) = %v, %v", st, err)
			}
			kids, _, err := c.Children(ctx, "/")
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(kids)
			if want := []string{"a", "x"}; !slices.Equal(kids, want) {
				t.Fatalf("Children(/) = %q, want %q", kids, want)
			}
			if st, err := c.Exists(ctx, "/"); err != nil || st == nil || st.NumChildren != 2 {
				t.Fatalf("Exists(/) = %+v, %v; want the namespace root with 2 children", st, err)
			}

			// watches: every event's path is the caller's.
			_, _, dataW, err := c.GetW(ctx, "/a")
			if err != nil {
				t.Fatal(err)
			}
			_, _, childW, err := c.ChildrenW(ctx, "/a")
			if err != nil {
				t.Fatal(err)
			}
			st, existsW, err := c.ExistsW(ctx, "/b")
			if err != nil || st != nil {
				t.Fatalf("ExistsW(/b) = %v, %v", st, err)
			}
			if _, err := c.Set(ctx, "/a", []byte("three"), -1); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Create(ctx, "/a/c", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Create(ctx, "/b", nil); err != nil {
				t.Fatal(err)
			}
			for _, w := range []struct {
				ch   <-chan zk.Event
				typ  zk.EventType
				path string
			}{
				{dataW, zk.EventNodeDataChanged, "/a"},
				{childW, zk.EventNodeChildrenChanged, "/a"},
				{existsW, zk.EventNodeCreated, "/b"},
			} {
				ev := waitEvent(t, w.ch, testTimeout, w.typ.String())
				if ev.Type != w.typ || ev.Path != w.path {
					t.Fatalf("event %+v, want %v on %s", ev, w.typ, w.path)
				}
			}
			_, _, delW, err := c.GetW(ctx, "/b")
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Delete(ctx, "/b"); err != nil {
				t.Fatal(err)
			}
			if ev := waitEvent(t, delW, testTimeout, "deletion"); ev.Type != zk.EventNodeDeleted || ev.Path != "/b" {
				t.Fatalf("event %+v, want NodeDeleted on /b", ev)
			}
			mustNotExist("/b")

			// multi.
			res, err := c.Multi(ctx,
				CreateOp("/m", []byte("m"), Persistent),
				CreateOp("/m/s-", nil, PersistentSequential),
				SetOp("/a", []byte("four"), -1),
				CheckOp("/a", -1),
				DeleteOp("/a/c", -1),
			)
			if err != nil {
				t.Fatalf("Multi: %v", err)
			}
			if len(res) != 5 {
				t.Fatalf("Multi returned %d results, want 5", len(res))
			}
			if res[0].String != "/m" {
				t.Fatalf("Multi create result %q, want /m", res[0].String)
			}
			if _, name := SplitPath(res[1].String); !strings.HasPrefix(res[1].String, "/m/") || !hasSeq(name, "s-") {
				t.Fatalf("Multi sequential create result %q, want /m/s-<10 digits>", res[1].String)
			}
			mustExist("/m")
			mustExist(res[1].String)
			mustNotExist("/a/c")
			if data, _, err := raw.Get(ctx, onServer("/a")); err != nil || string(data) != "four" {
				t.Fatalf("server data after Multi = %q, %v", data, err)
			}

			// delete.
			if err := c.Delete(ctx, "/x", DeletingChildren()); err != nil {
				t.Fatal(err)
			}
			mustNotExist("/x")
			// Nothing leaked outside the prefix: the top node holds only
			// the chroot or namespace.
			kids, _, err = raw.Children(ctx, top)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Split(strings.TrimPrefix(prefix, top+"/"), "/")[0]
			if !slices.Equal(kids, []string{want}) {
				t.Fatalf("children of %s = %q, want only %q", top, kids, want)
			}
		})
	}
}

// A transaction is the first operation in a fresh namespace: like Create,
// it must not fail because the namespace node does not exist yet.
func TestMultiInFreshNamespace(t *testing.T) {
	ns := newNamespace(t)
	c := connectNS(t, ns)
	ctx := testCtx(t)
	res, err := c.Multi(ctx, CreateOp("/first", []byte("x"), Persistent))
	if err != nil {
		t.Fatalf("Multi in a fresh namespace: %v", err)
	}
	if res[0].String != "/first" {
		t.Fatalf("Multi create result %q, want /first", res[0].String)
	}
	if st, err := c.Exists(ctx, "/first"); err != nil || st == nil {
		t.Fatalf("Exists(/first) = %v, %v", st, err)
	}
}

// A namespace is a node of its own: operations in it never touch nodes of
// another namespace with the same paths.
func TestNamespacesAreIsolated(t *testing.T) {
	base := newNamespace(t)
	a := connectNS(t, base+"/a")
	b := connectNS(t, base+"/b")
	ctx := testCtx(t)
	if _, err := a.Create(ctx, "/same", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Get(ctx, "/same"); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("Get in another namespace: %v, want zk.ErrNoNode", err)
	}
	if _, err := b.Create(ctx, "/same", []byte("b")); err != nil {
		t.Fatal(err)
	}
	if data, _, err := a.Get(ctx, "/same"); err != nil || string(data) != "a" {
		t.Fatalf("Get(/same) in a = %q, %v", data, err)
	}
}

// WithNamespace("/myapp") is a natural guess and is accepted; an invalid
// namespace fails with one message that names what the user wrote (not a
// path made of it, such as "//myapp") and says "curator:" once.
func TestWithNamespaceInput(t *testing.T) {
	tests := []struct {
		name    string
		ns      string
		want    string // the namespace kept, with its slash; "" for none
		wantErr string // the whole message; "" for none
	}{
		{"plain", "myapp", "/myapp", ""},
		{"leading slash", "/myapp", "/myapp", ""},
		{"nested", "myapp/locks", "/myapp/locks", ""},
		{"nested with leading slash", "/myapp/locks", "/myapp/locks", ""},
		{"empty is none", "", "", ""},
		{"root is none", "/", "", ""},
		{"two leading slashes", "//myapp", "", `curator: invalid option: namespace "//myapp": empty segment`},
		{"trailing slash", "myapp/", "", `curator: invalid option: namespace "myapp/": trailing slash`},
		{"trailing slash after leading", "/myapp/", "", `curator: invalid option: namespace "/myapp/": trailing slash`},
		{"empty segment", "a//b", "", `curator: invalid option: namespace "a//b": empty segment`},
		{"dotdot", "a/../b", "", `curator: invalid option: namespace "a/../b": relative segment ..`},
		{"dot", "/.", "", `curator: invalid option: namespace "/.": relative segment .`},
		{"NUL", "a\x00", "", `curator: invalid option: namespace "a\x00": NUL character`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := defaultOptions()
			o.namespace = "/before"
			err := WithNamespace(tt.ns)(&o)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("WithNamespace(%q) = %v, want nil", tt.ns, err)
				}
				if o.namespace != tt.want {
					t.Fatalf("WithNamespace(%q) kept %q, want %q", tt.ns, o.namespace, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("WithNamespace(%q) = nil, want %q", tt.ns, tt.wantErr)
			}
			if !errors.Is(err, ErrInvalidOption) {
				t.Errorf("WithNamespace(%q) = %v, want ErrInvalidOption", tt.ns, err)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("WithNamespace(%q) = %q, want %q", tt.ns, err.Error(), tt.wantErr)
			}
			if n := strings.Count(err.Error(), "curator:"); n != 1 {
				t.Errorf("%q says curator: %d times, want once", err.Error(), n)
			}
		})
	}
}
