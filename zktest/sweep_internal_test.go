package zktest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

func TestSweepRemovesDirectoriesOfDeadOwners(t *testing.T) {
	base := t.TempDir()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]string{
		"zktest-1-dead":  strconv.Itoa(dead.Process.Pid), // owner gone: removed
		"zktest-1-live":  strconv.Itoa(os.Getppid()),     // owner alive: kept
		"zktest-1-kept":  "",                             // WithKeepFiles: kept
		"other-1-dead":   strconv.Itoa(dead.Process.Pid), // not ours: kept
		"zktest-1-weird": "not a pid",                    // kept
	}
	for name, pid := range dirs {
		dir := filepath.Join(base, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if pid != "" {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(pid), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	sweepStaleIn(base)
	for name := range dirs {
		_, err := os.Stat(filepath.Join(base, name))
		if removed := os.IsNotExist(err); removed != (name == "zktest-1-dead") {
			t.Errorf("%s: removed = %v", name, removed)
		}
	}
}
