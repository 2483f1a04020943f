//go:build linux

package chaos

import (
	"os"
	"testing"
)

// Linux only: the exec rounds' OS check reads /proc.
// The test's own process is alive and in its own group; a pid that does
// not exist is not.
func TestReadProc(t *testing.T) {
	p, ok := readProc(os.Getpid())
	if !ok || !p.alive() {
		t.Fatalf("readProc(self) = %+v, %v", p, ok)
	}
	found := false
	for _, q := range groupMembers(p.pgrp) {
		found = found || q.pid == p.pid
	}
	if !found {
		t.Fatalf("group %d's members do not include the test (pid %d)", p.pgrp, p.pid)
	}
	if _, ok := readProc(1 << 30); ok {
		t.Fatal("readProc of a pid that cannot exist succeeded")
	}
}
