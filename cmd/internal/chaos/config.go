package chaos

import (
	"fmt"
	"time"
)

// Config configures Run. Zero fields take the defaults noted.
type Config struct {
	// Duration of the fault phase (default 30m). Faults start while it lasts;
	// the one in progress when it ends is healed before the end checks.
	Duration time.Duration
	// Seed of the fault schedule and of the workers' random holds.
	Seed int64
	// SessionTimeout asked by every client (default 4s). The progress bound
	// is twice this.
	SessionTimeout time.Duration
	// Clients is the number of clients of each workload (default 3), each
	// with its own proxy to every server.
	Clients int
	// Logf receives progress lines (default: none). It must be safe for
	// concurrent use.
	Logf func(format string, args ...any)
}

const (
	defaultDuration       = 30 * time.Minute
	defaultSessionTimeout = 4 * time.Second
	defaultClients        = 3
)

func (c Config) withDefaults() (Config, error) {
	if c.Duration == 0 {
		c.Duration = defaultDuration
	}
	if c.SessionTimeout == 0 {
		c.SessionTimeout = defaultSessionTimeout
	}
	if c.Clients == 0 {
		c.Clients = defaultClients
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	if c.Duration < 0 || c.SessionTimeout < 0 || c.Clients < 1 {
		return c, fmt.Errorf("chaos: invalid config: duration %v, session timeout %v, clients %d",
			c.Duration, c.SessionTimeout, c.Clients)
	}
	return c, nil
}
