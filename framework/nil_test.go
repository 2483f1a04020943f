package framework_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/gocurator/curator/connstate"
	"github.com/gocurator/curator/framework"
)

// Every exported method of a nil *Client can be called: none panics (Close
// did), the calls that would talk to ZooKeeper return ErrNilClient, and
// the rest report a client with no session. Reflection finds every method,
// so one added without a nil check fails here.
func TestNilClientIsSafe(t *testing.T) {
	var c *framework.Client
	v := reflect.ValueOf(c)
	for i := 0; i < v.NumMethod(); i++ {
		m := v.Type().Method(i)
		t.Run(m.Name, func(t *testing.T) {
			ft := v.Method(i).Type()
			args := make([]reflect.Value, ft.NumIn())
			for j := range args {
				args[j] = argFor(ft.In(j))
			}
			if ft.IsVariadic() {
				args = args[:len(args)-1]
			}
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("(*Client)(nil).%s panicked: %v", m.Name, r)
				}
			}()
			out := v.Method(i).Call(args)
			for _, o := range out {
				if err, ok := o.Interface().(error); ok && err != nil && !errors.Is(err, framework.ErrNilClient) {
					t.Errorf("%s returned %v, want ErrNilClient", m.Name, err)
				}
			}
		})
	}
	ctx := context.Background()
	if err := c.Close(); !errors.Is(err, framework.ErrNilClient) {
		t.Errorf("Close = %v", err)
	}
	if _, err := c.Create(ctx, "/a", nil); !errors.Is(err, framework.ErrNilClient) {
		t.Errorf("Create = %v", err)
	}
	select {
	case <-c.Done():
	default:
		t.Error("Done open")
	}
	select {
	case <-c.Session().Done():
	default:
		t.Error("Session().Done open")
	}
	if c.SessionAlive(1) || c.SessionID() != 0 {
		t.Error("a nil client has a session")
	}
	called := false
	c.Guard(1, func(closed bool, _ connstate.State) { called = closed })
	if !called {
		t.Error("Guard did not call its function at once, as for a closed client")
	}
}

// argFor returns a value of type ty to pass: a live context for contexts,
// a function returning zero values for functions, else the zero value.
func argFor(ty reflect.Type) reflect.Value {
	switch {
	case ty == reflect.TypeOf((*context.Context)(nil)).Elem():
		return reflect.ValueOf(context.Background())
	case ty.Kind() == reflect.Func:
		return reflect.MakeFunc(ty, func([]reflect.Value) []reflect.Value {
			out := make([]reflect.Value, ty.NumOut())
			for i := range out {
				out[i] = reflect.Zero(ty.Out(i))
			}
			return out
		})
	}
	return reflect.Zero(ty)
}
