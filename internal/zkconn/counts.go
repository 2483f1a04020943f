package zkconn

import (
	"sync"

	"github.com/go-zookeeper/zk"
)

// Kind is a kind of go-zookeeper's one-shot watches: the watch of GetW
// (KindData), ExistsW (KindExist) or ChildrenW (KindChild).
type Kind uint8

const (
	KindData  Kind = iota // GetW's
	KindExist             // ExistsW's
	KindChild             // ChildrenW's
)

type watchKey struct {
	path string // the server's path, with chroot and namespace
	kind Kind
}

// Counts counts the watches set on the current connection that have
// not fired, by go-zookeeper's own kinds.
type Counts struct {
	mu sync.Mutex
	n  map[watchKey]int
}

// Add counts d more (d < 0: fewer) watches of kind k on path; a watch
// is counted before it is set, so that the count never says none while
// go-zookeeper has one.
func (w *Counts) Add(path string, k Kind, d int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == nil {
		w.n = map[watchKey]int{}
	}
	key := watchKey{path, k}
	if v := w.n[key] + d; v > 0 {
		w.n[key] = v
	} else {
		delete(w.n, key)
	}
}

// fired forgets the watches an event fires, as go-zookeeper does
// (notifyWatches; and every kind for a path it stops watching).
func (w *Counts) fired(ev zk.Event) {
	var kinds []Kind
	switch ev.Type {
	case zk.EventNodeCreated:
		kinds = []Kind{KindExist}
	case zk.EventNodeDataChanged:
		kinds = []Kind{KindExist, KindData}
	case zk.EventNodeChildrenChanged:
		kinds = []Kind{KindChild}
	case zk.EventNodeDeleted, zk.EventNotWatching:
		kinds = []Kind{KindExist, KindData, KindChild}
	default:
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range kinds {
		delete(w.n, watchKey{ev.Path, k})
	}
}

// Reset forgets every watch: those of a replaced connection are not set
// again.
func (w *Counts) Reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n = nil
}

func (w *Counts) any() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.n) > 0
}

// wants reports whether a one-shot watch of go-zookeeper's waits for ev:
// one of the kinds it fires is counted on its path.
func (w *Counts) wants(ev zk.Event) bool {
	var kinds []Kind
	switch ev.Type {
	case zk.EventNodeCreated:
		kinds = []Kind{KindExist}
	case zk.EventNodeDataChanged:
		kinds = []Kind{KindExist, KindData}
	case zk.EventNodeChildrenChanged:
		kinds = []Kind{KindChild}
	default:
		kinds = []Kind{KindExist, KindData, KindChild}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range kinds {
		if w.n[watchKey{ev.Path, k}] > 0 {
			return true
		}
	}
	return false
}

// watching reports whether any one-shot watch of go-zookeeper's waits on
// path.
func (w *Counts) watching(path string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range []Kind{KindData, KindExist, KindChild} {
		if w.n[watchKey{path, k}] > 0 {
			return true
		}
	}
	return false
}

// take forgets one watch of kind on path, if one is counted.
func (w *Counts) take(path string, k Kind) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := watchKey{path, k}
	switch v := w.n[key]; {
	case v <= 0:
		return false
	case v == 1:
		delete(w.n, key)
	default:
		w.n[key] = v - 1
	}
	return true
}

// count returns how many watches of kind are counted on path.
func (w *Counts) count(path string, k Kind) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n[watchKey{path, k}]
}

// neededOn reports whether a one-shot watch counted on path uses the
// server table (KindData: data and exist watches; KindChild).
func (w *Counts) neededOn(path string, table Kind) bool {
	if table == KindChild {
		return w.count(path, KindChild) > 0
	}
	return w.count(path, KindData) > 0 || w.count(path, KindExist) > 0
}
