package framework

import (
	"log/slog"

	"go.uber.org/zap"

	"github.com/gocurator/curator/internal/zapslog"
)

// WithSlog routes the client's logs, and go-zookeeper's, to l, the standard
// library's structured logger, instead of zap (zap stays the default, as a
// no-op logger). Levels map to slog's (DPanic, Panic and Fatal to Error),
// a named logger's name becomes the attribute "logger", and zap fields
// become attributes; Logger still returns a *zap.Logger, which writes to l.
// l must not be nil.
func WithSlog(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return invalid("nil slog logger")
		}
		o.logger = zap.New(zapslog.New(l.Handler()))
		return nil
	}
}
