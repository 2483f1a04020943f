package framework

// ensembleOptions are the options of ensemble tracking (ensemble_tracker.go).
type ensembleOptions struct {
	// track follows the ensemble's dynamic configuration: off (Curator's
	// is on; WithEnsembleTracker says why it is opt-in here).
	track bool
}

// WithEnsembleTracker makes the client follow the ensemble's dynamic
// reconfiguration (ZooKeeper 3.5+), as Curator's EnsembleTracker does: it
// watches ConfigPath and, at every new configuration, replaces the servers
// it connects to with the members' client addresses (see
// Member.ClientAddr), so the next reconnection, and the connection of a
// new session after a loss, go to the current members. The live connection
// is kept. The chroot of the connect string is kept, and an older
// configuration (from a server that lags behind) never replaces a newer
// one; a configuration without client addresses changes nothing.
// ConnectString shows the servers in use.
//
// It is off by default: a connect string that names a load balancer or a
// DNS alias, rather than the members, must not be replaced by the
// members' own addresses. The tracker costs one watch on ConfigPath and a
// read per configuration change and per reconnection.
func WithEnsembleTracker() Option {
	return func(o *options) error {
		o.ensemble.track = true
		return nil
	}
}
