package rwlock

// Option configures an RWLock.
type Option func(*options)

type options struct {
	// data is written into the read and write nodes; nil means the
	// client's default data (Curator's behaviour).
	data []byte
}

// WithData sets the data of the lock nodes, read and write alike (default:
// the client's default data, the local IP), like the lockData argument of
// Curator's InterProcessReadWriteLock.
func WithData(data []byte) Option {
	return func(o *options) { o.data = append([]byte{}, data...) }
}
