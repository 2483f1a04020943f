package mutex

// Option configures a Mutex.
type Option func(*options)

type options struct {
	// data is written into the lock node; nil means the client's default
	// data (Curator's behaviour).
	data []byte
	// revoked is called when another process asks the holder to release
	// (see Revoke); nil means the mutex is not revocable.
	revoked func(*Mutex)
}

// WithData sets the data of the lock node (default: the client's default
// data, the local IP).
func WithData(data []byte) Option {
	return func(o *options) { o.data = append([]byte{}, data...) }
}

// Revocable makes the mutex revocable, like Curator's makeRevocable: while
// it holds the lock, a Revoke of its node calls fn (on a goroutine of its
// own), which should Release soon. Nodes of a revocable mutex carry empty
// data, as in Curator.
func Revocable(fn func(m *Mutex)) Option {
	return func(o *options) { o.revoked = fn }
}
