package semaphore

// Path returns the lock path the mutex was made with ("" for a nil Mutex).
// Lock-ordering code (recipes/multilock) sorts mutexes by it.
func (m *Mutex) Path() string {
	if m == nil {
		return ""
	}
	return m.sem.Path()
}
