package reentrant

import "github.com/gocurator/curator/recipes/locking"

// SetTestHookGranted sets testHookGranted for the test's duration.
func SetTestHookGranted(f func(*locking.Hold)) (restore func()) {
	testHookGranted.Store(&f)
	return func() { testHookGranted.Store(nil) }
}
