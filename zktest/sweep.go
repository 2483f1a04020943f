package zktest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// ownerFile in a server's directory holds the pid of the process that
// launched it, so directories of test binaries that were killed before
// Close can be recognised and removed.
const ownerFile = "owner.pid"

var sweepOnce sync.Once

// sweepStale removes, once per process, zktest directories in the default
// base directory whose owner is gone (their JVMs died with it). Kept
// directories (WithKeepFiles) have no owner file and are never touched.
func sweepStale() {
	sweepOnce.Do(func() { sweepStaleIn(os.TempDir()) })
}

func sweepStaleIn(base string) {
	dirs, _ := filepath.Glob(filepath.Join(base, "zktest-*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		// Best effort: another user's directory stays where it is.
		os.RemoveAll(dir)
	}
}

// writeOwner marks dir as owned by this process.
func writeOwner(dir string) error {
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
}
