package rwlock

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/locking"
)

// rd and wr name read and write nodes as Curator does; tag makes the UUID,
// which tells nodes with one sequence number apart.
func rd(tag string, seq int32) string {
	return fmt.Sprintf("_c_%s-%s%010d", uuidOf(tag), readName, seq)
}
func wr(tag string, seq int32) string {
	return fmt.Sprintf("_c_%s-%s%010d", uuidOf(tag), writeName, seq)
}

func uuidOf(tag string) string {
	return fmt.Sprintf("%08x-0000-4000-8000-000000000000", []byte(tag + "    ")[:4])
}

func TestParseChild(t *testing.T) {
	tests := []struct {
		name, child string
		side        side
		seq         int32
		ok          bool
	}{
		{"read", rd("a", 3), readSide, 3, true},
		{"write", wr("a", 4), writeSide, 4, true},
		{"unprotected read", "__READ__0000000005", readSide, 5, true},
		{"last lock name wins", "x__READ__y__WRIT__0000000009", writeSide, 9, true},
		{"last lock name wins, read", "x__WRIT__y__READ__0000000010", readSide, 10, true},
		{"wrapped", wr("a", -2147483648), writeSide, -2147483648, true},
		{"mutex node is foreign", "_c_x-lock-0000000001", 0, 0, false},
		{"foreign", "config", 0, 0, false},
		{"no number", "_c_x-__READ__", 0, 0, false},
		{"junk after the number", "_c_x-__WRIT__00000001x", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, seq, ok := parseChild(tt.child)
			if ok != tt.ok || (ok && (s != tt.side || seq != tt.seq)) {
				t.Fatalf("parseChild(%q) = %v, %d, %v; want %v, %d, %v", tt.child, s, seq, ok, tt.side, tt.seq, tt.ok)
			}
		})
	}
}

func TestWritePredicate(t *testing.T) {
	tests := []struct {
		name     string
		children []string // in listing order, unsorted
		own      string
		want     locking.Verdict
	}{
		{"alone", []string{wr("a", 1)}, wr("a", 1), locking.Verdict{Held: true}},
		{"first among readers and writers", []string{rd("b", 4), wr("c", 3), wr("a", 2)}, wr("a", 2), locking.Verdict{Held: true}},
		{"behind a first reader", []string{wr("a", 2), rd("b", 1)}, wr("a", 2),
			locking.Verdict{Watch: rd("b", 1), HeldWhenGone: true}},
		{"behind a first writer: it may downgrade", []string{wr("a", 2), wr("b", 1)}, wr("a", 2),
			locking.Verdict{Watch: wr("b", 1)}},
		{"behind two readers watches the nearest", []string{rd("b", 1), rd("c", 2), wr("a", 3)}, wr("a", 3),
			locking.Verdict{Watch: rd("c", 2)}},
		{"behind a downgrade pair", []string{wr("b", 5), rd("b2", 5), wr("a", 6)}, wr("a", 6),
			locking.Verdict{Watch: rd("b2", 5)}},
		{"behind a downgraded reader whose write node is gone", []string{rd("b2", 5), wr("a", 6)}, wr("a", 6),
			locking.Verdict{Watch: rd("b2", 5), HeldWhenGone: true}},
		{"readers behind do not matter", []string{wr("a", 7), rd("b", 8), rd("c", 9)}, wr("a", 7), locking.Verdict{Held: true}},
		{"foreign children are ignored", []string{"config", "_c_x-lock-0000000000", wr("a", 7), "zzz"}, wr("a", 7),
			locking.Verdict{Held: true}},
		{"foreign child between", []string{rd("b", 1), "_c_x-lock-0000000002", wr("a", 3)}, wr("a", 3),
			locking.Verdict{Watch: rd("b", 1), HeldWhenGone: true}},
		{"wrap-around: the old positive writer is ahead", []string{wr("a", -2147483648), wr("b", 2147483647)}, wr("a", -2147483648),
			locking.Verdict{Watch: wr("b", 2147483647)}},
		{"wrap-around: the newest positive is first", []string{wr("a", 2147483647), rd("b", -2147483647)}, wr("a", 2147483647),
			locking.Verdict{Held: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sorted := locking.SortChildren(tt.children, writeDriver{}.Sequence)
			got, err := writeDriver{}.GetsTheLock(locking.Listing{Sorted: sorted, Own: tt.own})
			if err != nil || got != tt.want {
				t.Fatalf("GetsTheLock(%v, %s) = %+v, %v; want %+v", sorted, tt.own, got, err, tt.want)
			}
		})
	}
}

func TestWritePredicateOwnNodeMissing(t *testing.T) {
	_, err := writeDriver{}.GetsTheLock(locking.Listing{Sorted: []string{wr("b", 1)}, Own: wr("a", 2)})
	if !errors.Is(err, ErrLockLost) {
		t.Fatalf("err = %v, want ErrLockLost", err)
	}
}

func TestReadPredicate(t *testing.T) {
	tests := []struct {
		name      string
		children  []string // in listing order, unsorted
		own       string
		ownWrite  string // the write node our RWLock holds
		downgrade bool   // own was made as a downgrade node
		want      locking.Verdict
		wantErr   error
	}{
		{"alone", []string{rd("a", 1)}, rd("a", 1), "", false, locking.Verdict{Held: true}, nil},
		{"behind readers only", []string{rd("b", 1), rd("c", 2), rd("a", 3)}, rd("a", 3), "", false,
			locking.Verdict{Held: true}, nil},
		{"writers behind do not block", []string{rd("a", 1), wr("b", 2), wr("c", 3)}, rd("a", 1), "", false,
			locking.Verdict{Held: true}, nil},
		{"behind one writer", []string{rd("a", 3), wr("b", 2), rd("c", 1)}, rd("a", 3), "", false,
			locking.Verdict{Watch: wr("b", 2), HeldWhenGone: true}, nil},
		{"behind readers and one writer", []string{wr("b", 1), rd("c", 2), rd("a", 3)}, rd("a", 3), "", false,
			locking.Verdict{Watch: wr("b", 1), HeldWhenGone: true}, nil},
		{"behind two writers watches the nearest", []string{wr("b", 1), rd("c", 2), wr("d", 3), rd("a", 4)}, rd("a", 4), "", false,
			locking.Verdict{Watch: wr("d", 3)}, nil},
		{"between two writers", []string{wr("b", 1), rd("a", 2), wr("d", 3), rd("e", 4)}, rd("a", 2), "", false,
			locking.Verdict{Watch: wr("b", 1), HeldWhenGone: true}, nil},
		{"downgrade: own write node with our sequence does not block", []string{wr("a", 5), rd("a2", 5), wr("b", 6)}, rd("a2", 5), wr("a", 5), true,
			locking.Verdict{Held: true}, nil},
		{"downgrade: sorted before own write node", []string{rd("0", 5), wr("z", 5)}, rd("0", 5), wr("z", 5), true,
			locking.Verdict{Held: true}, nil},
		{"downgrade: write node released meanwhile, still listed", []string{wr("a", 5), rd("a2", 5), wr("b", 6)}, rd("a2", 5), "", true,
			locking.Verdict{Held: true}, nil},
		{"downgrade: write node gone before we looked", []string{rd("a2", 5), wr("b", 6)}, rd("a2", 5), "", true,
			locking.Verdict{}, errDowngradeRaced},
		{"another owner's downgrade pair blocks", []string{wr("b", 5), rd("b2", 5), rd("a", 6)}, rd("a", 6), "", false,
			locking.Verdict{Watch: wr("b", 5), HeldWhenGone: true}, nil},
		{"own held write node ahead does not block", []string{wr("a", 5), rd("a2", 6)}, rd("a2", 6), wr("a", 5), false,
			locking.Verdict{Held: true}, nil},
		{"own held write node ahead, another writer between", []string{wr("a", 5), wr("b", 6), rd("a2", 7)}, rd("a2", 7), wr("a", 5), false,
			locking.Verdict{Watch: wr("b", 6), HeldWhenGone: true}, nil},
		{"own write node not held blocks", []string{rd("c", 4), wr("a", 5), rd("a2", 6)}, rd("a2", 6), "", false,
			locking.Verdict{Watch: wr("a", 5), HeldWhenGone: true}, nil},
		{"foreign children are ignored", []string{"lock-0000000001", rd("a", 3), "_c_x-lock-0000000002", "cfg"}, rd("a", 3), "", false,
			locking.Verdict{Held: true}, nil},
		{"wrap-around: positive writer is ahead", []string{rd("a", -2147483647), wr("b", 2147483647)}, rd("a", -2147483647), "", false,
			locking.Verdict{Watch: wr("b", 2147483647), HeldWhenGone: true}, nil},
		{"wrap-around: negative writer is behind", []string{rd("a", 2147483647), wr("b", -2147483648)}, rd("a", 2147483647), "", false,
			locking.Verdict{Held: true}, nil},
		{"own node missing", []string{wr("b", 1)}, rd("a", 2), "", false, locking.Verdict{}, ErrLockLost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &readDriver{ownWrite: func() string { return tt.ownWrite }}
			if tt.downgrade {
				_, d.downgradeSeq, _ = parseChild(tt.own)
				d.downgrade = true
			}
			sorted := locking.SortChildren(tt.children, d.Sequence)
			got, err := d.GetsTheLock(locking.Listing{Sorted: sorted, Own: tt.own})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("GetsTheLock(%v, %s) error = %v, want %v", sorted, tt.own, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("GetsTheLock(%v, %s) = %+v, %v; want %+v", sorted, tt.own, got, err, tt.want)
			}
		})
	}
}

// A downgrade that found its write node gone does not downgrade from that
// node again: the acquire would go round forever when the node was deleted
// behind the hold's back.
func TestReadNodeSpecAfterRacedDowngrade(t *testing.T) {
	own := wr("a", 5)
	d := &readDriver{ownWrite: func() string { return own }}
	spec := d.Node()
	if spec.Mode != framework.Ephemeral {
		t.Fatalf("first Node() = %+v, want a downgrade node", spec)
	}
	node := "_c_" + uuidOf("r") + "-" + spec.Name
	if _, err := d.GetsTheLock(locking.Listing{Sorted: []string{node}, Own: node}); !errors.Is(err, errDowngradeRaced) {
		t.Fatalf("GetsTheLock without the write node: %v, want errDowngradeRaced", err)
	}
	if spec := d.Node(); spec.Mode != framework.EphemeralSequential || spec.Name != readName {
		t.Fatalf("Node() after the race = %+v, want an ordinary read node", spec)
	}
	own = wr("a", 9) // a new write hold downgrades again
	if spec := d.Node(); spec.Mode != framework.Ephemeral || spec.Name != "__READ__0000000009" {
		t.Fatalf("Node() for a new write hold = %+v, want a downgrade node", spec)
	}
}

func TestReadNodeSpec(t *testing.T) {
	tests := []struct {
		name     string
		ownWrite string
		want     locking.NodeSpec
	}{
		{"ordinary read node", "", locking.NodeSpec{Name: "__READ__", Mode: framework.EphemeralSequential, Data: []byte("d")}},
		{"downgrade takes the write node's sequence", wr("a", 42),
			locking.NodeSpec{Name: "__READ__0000000042", Mode: framework.Ephemeral, Data: []byte("d")}},
		{"downgrade after the wrap", wr("a", -7),
			locking.NodeSpec{Name: "__READ__-000000007", Mode: framework.Ephemeral, Data: []byte("d")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &readDriver{data: []byte("d"), ownWrite: func() string { return tt.ownWrite }}
			got := d.Node()
			if got.Name != tt.want.Name || got.Mode != tt.want.Mode || string(got.Data) != string(tt.want.Data) {
				t.Fatalf("Node() = %+v, want %+v", got, tt.want)
			}
			if seq, ok := d.Sequence("_c_" + uuidOf("a") + "-" + got.Name); tt.ownWrite != "" && !ok {
				t.Fatalf("downgrade node %q not recognised (seq %d)", got.Name, seq)
			}
			if d.downgrade != (tt.ownWrite != "") {
				t.Fatalf("downgrade = %v after Node() with own write %q", d.downgrade, tt.ownWrite)
			}
		})
	}
	if got := (writeDriver{}).Node(); got.Name != "__WRIT__" || got.Mode != framework.EphemeralSequential || got.Data != nil {
		t.Fatalf("write Node() = %+v", got)
	}
}
