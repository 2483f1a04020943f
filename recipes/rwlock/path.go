package rwlock

// Path returns the lock path the read/write lock was made with ("" for a
// nil RWLock). Lock-ordering code (recipes/multilock) sorts locks by it.
func (rw *RWLock) Path() string {
	if rw == nil {
		return ""
	}
	return rw.write.reentrant().Loop().Path()
}
