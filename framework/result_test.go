package framework

import (
	"bytes"
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"
)

// A refused transaction says which operation failed, why, and what became
// of every other one; an applied one types every result.
func TestTransactionResults(t *testing.T) {
	ctx := testCtx(t)
	c := connectNS(t, newNamespace(t))
	if _, err := c.Create(ctx, "/base", []byte("0")); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name  string
		ops   []Op
		index int
		want  error
	}{
		{"last op fails", []Op{
			CreateOp("/base/new", []byte("x"), Persistent),
			SetOp("/base", []byte("changed"), -1),
			CheckOp("/base/missing", -1),
		}, 2, zk.ErrNoNode},
		{"middle op fails", []Op{
			CheckOp("/base", 0),
			DeleteOp("/base", 7),
			CreateOp("/base/new", nil, Persistent),
		}, 1, zk.ErrBadVersion},
		{"first op fails", []Op{
			CreateOp("/base", nil, Persistent),
			SetOp("/base", nil, -1),
		}, 0, zk.ErrNodeExists},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.Transaction(ctx, tc.ops...)
			var te *TransactionError
			if !errors.As(err, &te) || !errors.Is(err, tc.want) {
				t.Fatalf("Transaction = %v, want a *TransactionError wrapping %v", err, tc.want)
			}
			if te.Index != tc.index || len(res) != len(tc.ops) || len(te.Results) != len(tc.ops) {
				t.Fatalf("failing op %d, %d results; want op %d, %d results", te.Index, len(res), tc.index, len(tc.ops))
			}
			for i, r := range res {
				if r.Path != tc.ops[i].Path() || r.Type != tc.ops[i].typ() || r.Created != "" {
					t.Errorf("result %d = %+v, want the op's type and path", i, r)
				}
				switch {
				case i == tc.index && !errors.Is(r.Err, tc.want):
					t.Errorf("result %d: %v, want %v", i, r.Err, tc.want)
				case i != tc.index && !errors.Is(r.Err, ErrRolledBack):
					t.Errorf("result %d: %v, want ErrRolledBack", i, r.Err)
				}
			}
			// Multi reports the same error, without results.
			if mres, merr := c.Multi(ctx, tc.ops...); mres != nil || !errors.As(merr, &te) || te.Index != tc.index {
				t.Fatalf("Multi = %v, %v; want nil and the same *TransactionError", mres, merr)
			}
		})
	}
	if st, err := c.Exists(ctx, "/base/new"); err != nil || st != nil {
		t.Fatalf("a refused transaction created a node: %+v, %v", st, err)
	}

	res, err := c.Transaction(ctx,
		CheckOp("/base", 0),
		CreateOp("/base/s-", []byte("x"), PersistentSequential),
		SetOp("/base", []byte("1"), 0),
		DeleteOp("/base/s-0000000000", -1),
	)
	if err != nil {
		t.Fatal(err)
	}
	want := []OpResult{
		{Type: OpCheck, Path: "/base"},
		{Type: OpCreate, Path: "/base/s-", Created: "/base/s-0000000000"},
		{Type: OpSet, Path: "/base"},
		{Type: OpDelete, Path: "/base/s-0000000000"},
	}
	for i, w := range want {
		got := res[i]
		if got.Type != w.Type || got.Path != w.Path || got.Created != w.Created || got.Err != nil {
			t.Errorf("result %d = %+v, want %+v", i, got, w)
		}
	}
	if res[2].Stat == nil || res[2].Stat.Version != 1 || res[0].Stat != nil {
		t.Fatalf("stats: check %+v, set %+v; want none and version 1", res[0].Stat, res[2].Stat)
	}
	if got := []string{OpCreate.String(), OpDelete.String(), OpSet.String(), OpCheck.String(), OpType(9).String()}; got[2] != "SET_DATA" || got[4] != "OpType(9)" {
		t.Fatalf("OpType names %q", got)
	}
	if err := c.Delete(ctx, "/base"); err != nil {
		t.Fatal(err)
	}
}

// A transaction is not idempotent: after a lost reply its retry meets its
// own effect, and the error says which operation that was.
func TestTransactionAfterLostReply(t *testing.T) {
	ctx := testCtx(t)
	c, proxy, direct := lostReplyClient(t)
	if _, err := direct.Create(ctx, "/setup", nil); err != nil {
		t.Fatal(err)
	}
	fired := proxy.LoseNextMultiReply()
	_, err := c.Transaction(ctx, CheckOp("/setup", 0), CreateOp("/made", nil, Persistent))
	waitClosed(t, fired, testTimeout, "lost multi reply")
	var te *TransactionError
	if !errors.As(err, &te) || te.Index != 1 || !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("retried transaction = %v, want op 1 refused with zk.ErrNodeExists", err)
	}
	if st, err := direct.Exists(ctx, "/made"); err != nil || st == nil {
		t.Fatalf("the first attempt's node: %+v, %v", st, err)
	}
	for _, p := range []string{"/made", "/setup"} {
		if err := direct.Delete(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTransactionOptions(t *testing.T) {
	ctx := testCtx(t)
	c := connectNS(t, newNamespace(t))
	data := bytes.Repeat([]byte("txn "), 100)
	if _, err := c.Transaction(ctx,
		CreateOp("/z", data, Persistent, Compressed(), WithACL(zk.WorldACL(zk.PermRead|zk.PermWrite|zk.PermDelete))),
		CreateOp("/p", data, Persistent),
	); err != nil {
		t.Fatal(err)
	}
	if got, _, err := c.Get(ctx, "/z", Decompressed()); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("compressed create in a transaction: %d bytes, %v", len(got), err)
	}
	if acl, _, err := c.GetACL(ctx, "/z"); err != nil || acl[0].Perms != zk.PermRead|zk.PermWrite|zk.PermDelete {
		t.Fatalf("ACL of a create in a transaction: %v, %v", acl, err)
	}
	if _, err := c.Transaction(ctx, SetOp("/p", []byte("v"), 0, Compressed())); err != nil {
		t.Fatal(err)
	}
	if got, _, err := c.Get(ctx, "/p", Decompressed()); err != nil || string(got) != "v" {
		t.Fatalf("compressed set in a transaction: %q, %v", got, err)
	}
	for _, tc := range []struct {
		name string
		op   Op
	}{
		{"protected", CreateOp("/x", nil, Persistent, Protected())},
		{"parents", CreateOp("/x", nil, Persistent, CreatingParents())},
		{"mode option", CreateOp("/x", nil, Persistent, WithMode(Ephemeral))},
		{"idempotent create", CreateOp("/x", nil, Persistent, Idempotent())},
		{"or set", CreateOp("/x", nil, Persistent, OrSetData(-1))},
		{"nil create option", CreateOp("/x", nil, Persistent, nil)},
		{"idempotent set", SetOp("/p", nil, -1, Idempotent())},
		{"nil set option", SetOp("/p", nil, -1, nil)},
	} {
		if _, err := c.Transaction(ctx, tc.op); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("%s: %v, want ErrInvalidOption", tc.name, err)
		}
	}
	if _, err := (*Client)(nil).Transaction(ctx, CheckOp("/p", -1)); !errors.Is(err, ErrNilClient) {
		t.Fatalf("nil client: %v", err)
	}
	if _, err := c.Transaction(ctx, DeleteOp("/z", -1), DeleteOp("/p", -1)); err != nil {
		t.Fatal(err)
	}
}
