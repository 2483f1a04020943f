package procstat

import (
	"os"
	"strconv"
	"testing"
)

func TestReadSelf(t *testing.T) {
	comm, f, ok := Read(os.Getpid())
	if !ok || comm == "" || len(f) < 20 || f[0] != "R" && f[0] != "S" {
		t.Fatalf("Read(self) = %q, %q, %v", comm, f, ok)
	}
	if ppid, err := strconv.Atoi(f[1]); err != nil || ppid != os.Getppid() {
		t.Fatalf("parent %q, want %d", f[1], os.Getppid())
	}
	for _, pid := range []int{0, -1, 1 << 30} {
		if _, _, ok := Read(pid); ok {
			t.Errorf("Read(%d) found a process", pid)
		}
	}
}
