package framework

import (
	"fmt"

	"go.uber.org/zap"
)

// zkLogger routes go-zookeeper's Printf logging into zap at Debug: the client
// reports what matters (states, retries) itself.
type zkLogger struct{ l *zap.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	if z.l.Core().Enabled(zap.DebugLevel) {
		z.l.Debug(fmt.Sprintf(format, args...))
	}
}
