package locking

import (
	"errors"
	"testing"

	"github.com/gocurator/curator/framework"
)

// dirOnly is a DirDriver with nothing but a layout.
type dirOnly struct {
	StandardDriver
	lay Layout
}

func (d dirOnly) Layout() Layout { return d.lay }

func TestLayoutOf(t *testing.T) {
	tests := []struct {
		name    string
		d       Driver
		wantDir string
		wantErr error
	}{
		{"plain driver: the lock path", StandardDriver{LockName: "lock-"}, "/a/b", nil},
		{"empty Dir: the lock path", dirOnly{lay: Layout{WatchChildren: true}}, "/a/b", nil},
		{"one segment", dirOnly{lay: Layout{Dir: "leases"}}, "/a/b/leases", nil},
		{"two segments", dirOnly{lay: Layout{Dir: "x/y"}}, "", framework.ErrInvalidPath},
		{"leading slash", dirOnly{lay: Layout{Dir: "/leases"}}, "", framework.ErrInvalidPath},
		{"relative segment", dirOnly{lay: Layout{Dir: ".."}}, "", framework.ErrInvalidPath},
		{"NUL", dirOnly{lay: Layout{Dir: "a\x00"}}, "", framework.ErrInvalidPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, dir, err := layoutOf("/a/b", tt.d)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && dir != tt.wantDir {
				t.Fatalf("dir = %q, want %q", dir, tt.wantDir)
			}
		})
	}
}
