package node

// WithClock sets the clock that times a TTL node's touches.
var WithClock = withClock
