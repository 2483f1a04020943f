package conformance_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/recipes/atomic"
	"github.com/gocurator/curator/recipes/barrier"
	"github.com/gocurator/curator/recipes/internal/reentrant"
	"github.com/gocurator/curator/recipes/leader"
	"github.com/gocurator/curator/recipes/locking"
	"github.com/gocurator/curator/recipes/multilock"
	"github.com/gocurator/curator/recipes/mutex"
	"github.com/gocurator/curator/recipes/rwlock"
	"github.com/gocurator/curator/recipes/semaphore"
	"github.com/gocurator/curator/recipes/shared"
)

// Methods on a nil *Lease used to panic (Err, Done, Node) while Release
// returned ErrNotHeld. Every handle type treats a nil receiver alike:
// nothing panics, every error is ErrNotHeld or ErrNilHandle, Done is
// closed, and the other results are zero. Every exported method is called,
// so a method added later is held to it too.
func TestNilHandles(t *testing.T) {
	for _, nilHandle := range []any{
		(*mutex.Mutex)(nil),
		(*rwlock.RWLock)(nil),
		(*rwlock.Lock)(nil),
		(*semaphore.Semaphore)(nil),
		(*semaphore.Lease)(nil),
		(*semaphore.Mutex)(nil),
		(*locking.Hold)(nil),
		(*reentrant.Handle)(nil),
		(*locking.Loop)(nil),
		(*shared.Count)(nil),
		(*leader.Term)(nil),
		(*leader.Latch)(nil),
		(*multilock.MultiLock)(nil),
		(*barrier.Barrier)(nil),
		(*barrier.Double)(nil),
		(*atomic.Long)(nil),
		(*atomic.Int)(nil),
		(*atomic.Value)(nil),
		(*shared.Value)(nil),
	} {
		v := reflect.ValueOf(nilHandle)
		for i := 0; i < v.NumMethod(); i++ {
			m := v.Type().Method(i)
			t.Run(v.Type().String()+"."+m.Name, func(t *testing.T) {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panicked: %v", r)
					}
				}()
				for _, out := range v.Method(i).Call(args(v.Method(i).Type())) {
					checkNilResult(t, out)
				}
			})
		}
	}
}

// args returns arguments for a method: a live context, 1 for integers,
// zero values for the rest (and no variadic arguments).
func args(ft reflect.Type) []reflect.Value {
	n := ft.NumIn()
	if ft.IsVariadic() {
		n--
	}
	in := make([]reflect.Value, n)
	ctxType := reflect.TypeOf((*context.Context)(nil)).Elem()
	for i := range in {
		switch p := ft.In(i); {
		case p == ctxType:
			in[i] = reflect.ValueOf(context.Background())
		case p.Kind() == reflect.Int:
			in[i] = reflect.ValueOf(1)
		default:
			in[i] = reflect.Zero(p)
		}
	}
	return in
}

func checkNilResult(t *testing.T, out reflect.Value) {
	t.Helper()
	switch x := out.Interface().(type) {
	case error:
		if !errors.Is(x, locking.ErrNotHeld) && !errors.Is(x, framework.ErrNilHandle) {
			t.Fatalf("error %v, want ErrNotHeld or ErrNilHandle", x)
		}
	case <-chan struct{}:
		select {
		case <-x:
		default:
			t.Fatal("Done of a nil handle is not closed")
		}
	case context.Context: // a leader Term's Context: ended
		if x == nil || x.Err() == nil {
			t.Fatal("Context of a nil handle is not done")
		}
	case framework.Op:
		if !reflect.ValueOf(x).IsZero() {
			t.Fatalf("op %+v, want the zero Op", x)
		}
	case bool:
		if x {
			t.Fatal("true from a nil handle")
		}
	default:
		if !out.IsZero() && !(out.Kind() == reflect.Func) {
			t.Fatalf("result %#v, want the zero value", x)
		}
	}
}
