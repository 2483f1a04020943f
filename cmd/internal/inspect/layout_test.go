package inspect

import (
	"reflect"
	"testing"
	"time"
)

// eph is an ephemeral leaf of session owner.
func eph(name string, data string, owner int64) *Znode {
	return &Znode{Name: name, Data: []byte(data), Owner: owner, Loaded: true}
}

// sub is a persistent directory with its children loaded.
func sub(name string, children ...*Znode) *Znode {
	return &Znode{Name: name, Loaded: true, NumChildren: int32(len(children)), Cversion: int32(len(children)), Children: children}
}

const instanceJSON = `{"name":"orders","id":"i-1","address":"10.0.0.7","port":8080,"sslPort":null,"payload":null,` +
	`"registrationTimeUTC":1700000000000,"serviceType":"DYNAMIC","uriSpec":null}`

// One classifier names every layout; the ones the CLI misread are pinned:
// service instances and latch nodes are no group's members.
func TestIdentify(t *testing.T) {
	writer := "writer-" + uuid
	tests := []struct {
		name  string
		z     *Znode
		kind  string
		size  int
		parts map[string]string
	}{
		{"leaf", &Znode{Name: "x", Data: []byte("v"), Loaded: true}, "", 0, nil},
		{"empty directory", sub("x"), "", 0, nil},
		{"plain directory", sub("x", &Znode{Name: "a", Loaded: true}, &Znode{Name: "b", Loaded: true, Data: []byte("1")}), "", 0, nil},
		{"group", sub("g", eph("go-1", "10.0.0.1", 1), eph("java-1", "10.0.0.2", 2)), KindGroup, 2,
			map[string]string{"go-1": PartMember, "java-1": PartMember}},
		{"service instances are no group", sub("orders", eph("i-1", instanceJSON, 1)), KindService, 1,
			map[string]string{"i-1": PartInstance}},
		{"a persistent instance too", sub("orders", &Znode{Name: "i-1", Data: []byte(instanceJSON), Loaded: true}), KindService, 1,
			map[string]string{"i-1": PartInstance}},
		{"services base", sub("services", sub("orders", eph("i-1", instanceJSON, 1)), sub("idle")), KindServices, 1,
			map[string]string{"orders": PartService, "idle": PartService}},
		{"latch nodes are no group", sub("election", cur(markLatch, 1, 1), cur(markLatch, 2, 2)), KindLatch, 2, nil},
		{"mutex", sub("l", cur(markLock, 1, 1)), KindMutex, 1, nil},
		{"busy V2 semaphore", sub("s", sub("leases", cur(markLease, 1, 1)), &Znode{Name: "locks", Loaded: true, Cversion: 4}),
			KindSemaphoreV2, 1, map[string]string{"leases": PartLeases, "locks": PartGate}},
		{"counter with a writer", &Znode{Name: "c", Data: make([]byte, 8), Loaded: true, Children: []*Znode{eph(writer, "", 1)}},
			KindCounter, 1, map[string]string{writer: PartWriter}},
		{"writer-named children under other data", &Znode{Name: "c", Data: []byte("abc"), Loaded: true, Children: []*Znode{eph(writer, "", 1)}},
			KindGroup, 1, nil},
		{"double barrier", sub("b", eph(uuid, "10.0.0.1", 1), &Znode{Name: "ready", Loaded: true}), KindDoubleBarrier, 1,
			map[string]string{uuid: PartMember, "ready": PartReady}},
		{"queue", sub("q", &Znode{Name: "queue-0000000001", Loaded: true, Data: []byte{0, 1}}, &Znode{Name: "queue-|id|0000000002", Loaded: true}),
			KindQueue, 2, nil},
		{"queue lock path", sub("ql", eph("queue-0000000001", "", 1)), KindQueueLock, 1, nil},
		{"simple queue", sub("sq", &Znode{Name: "qn-0000000007", Loaded: true}), KindSimpleQueue, 1, nil},
		{"queue sharder", sub("qs", sub("queue-"+uuid, &Znode{Name: "queue-0000000001", Loaded: true}), sub("queue-"+uuid2)), KindQueueSharder, 2,
			map[string]string{"queue-" + uuid: PartShard, "queue-" + uuid2: PartShard}},
		{"a shard holding no queue items", sub("qs", sub("queue-"+uuid, &Znode{Name: "x", Loaded: true})), "", 0, nil},
		{"queue items mixed with other nodes", sub("q", &Znode{Name: "queue-0000000001", Loaded: true}, &Znode{Name: "x", Loaded: true}), "", 0, nil},
		{"an ephemeral node is no recipe", &Znode{Name: "e", Owner: 1, Loaded: true}, "", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := Identify("/p", tt.z)
			if l.Kind != tt.kind || l.Size != tt.size || l.Path != "/p" {
				t.Fatalf("kind %q size %d path %q, want %q %d", l.Kind, l.Size, l.Path, tt.kind, tt.size)
			}
			if tt.parts != nil && !reflect.DeepEqual(l.Parts, tt.parts) {
				t.Fatalf("parts %v, want %v", l.Parts, tt.parts)
			}
		})
	}
}

// A busy V2 semaphore's locks/ gate is empty between two acquires: it is
// the semaphore's, not an orphan to delete. An idle one's are (the server
// deletes them as containers).
func TestOrphansSkipBusyV2Gate(t *testing.T) {
	s := &Sessions{addrs: map[int64]string{1: "h:1"}, Complete: true}
	busy := sub("busy", sub("leases", cur(markLease, 1, 1)), &Znode{Name: "locks", Loaded: true, Cversion: 6})
	idle := sub("idle", &Znode{Name: "leases", Loaded: true, Cversion: 2}, &Znode{Name: "locks", Loaded: true, Cversion: 2})
	var got []string
	for _, o := range Orphans("/", dir(busy, idle), s, time.Unix(2000, 0)) {
		got = append(got, o.Reason+" "+o.Node)
	}
	want := []string{"empty-parent /idle/leases", "empty-parent /idle/locks"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
