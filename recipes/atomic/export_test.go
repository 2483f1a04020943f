package atomic

// SetBeforeWrite installs a hook run between each try's read and its
// write (told whether the try holds the promoted lock), to make conflicts
// and faults happen at a chosen point. Set it before the handle is used.
func SetBeforeWrite[T int32 | int64](n *Number[T], fn func(promoted bool)) { n.k.beforeWrite = fn }

// WriterPath returns the handle's writer child.
func WriterPath[T int32 | int64](n *Number[T]) string { return n.k.writer }

// ValueWriterPath returns the Value handle's writer child.
func ValueWriterPath(v *Value) string { return v.k.writer }

// Pending returns how many adds wait in the queue of n's counter (adds of
// this process combined into one write).
func Pending[T int32 | int64](n *Number[T]) int {
	adders.Lock()
	a, _ := adders.m[keyOf[T](n.k)].(*adder[T])
	adders.Unlock()
	if a == nil {
		return 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.pending)
}
