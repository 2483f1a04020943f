package framework

import (
	"context"
	"log/slog"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
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
		o.logger = zap.New(&slogCore{h: l.Handler()})
		return nil
	}
}

// slogCore is a zapcore.Core that writes to a slog.Handler.
type slogCore struct {
	h slog.Handler // With's fields are added to it as attributes
}

func slogLevel(l zapcore.Level) slog.Level {
	switch {
	case l <= zapcore.DebugLevel:
		return slog.LevelDebug
	case l == zapcore.InfoLevel:
		return slog.LevelInfo
	case l == zapcore.WarnLevel:
		return slog.LevelWarn
	}
	return slog.LevelError
}

// Enabled asks the handler.
func (s *slogCore) Enabled(l zapcore.Level) bool {
	return s.h.Enabled(context.Background(), slogLevel(l))
}

// With returns a core whose records carry fields.
func (s *slogCore) With(fields []zapcore.Field) zapcore.Core {
	return &slogCore{h: s.h.WithAttrs(slogAttrs(fields))}
}

// Check adds the core to ce when the level is enabled.
func (s *slogCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if s.Enabled(e.Level) {
		return ce.AddCore(e, s)
	}
	return ce
}

// Write hands one record to the handler.
func (s *slogCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	r := slog.NewRecord(e.Time, slogLevel(e.Level), e.Message, 0)
	if e.LoggerName != "" {
		r.AddAttrs(slog.String("logger", e.LoggerName))
	}
	r.AddAttrs(slogAttrs(fields)...)
	return s.h.Handle(context.Background(), r)
}

// Sync has nothing to flush: handlers write as they go.
func (s *slogCore) Sync() error { return nil }

// slogAttrs turns zap fields into attributes, through zap's own encoder so
// that every field type (errors, durations, objects) is rendered as zap
// would.
func slogAttrs(fields []zapcore.Field) []slog.Attr {
	if len(fields) == 0 {
		return nil
	}
	enc := zapcore.NewMapObjectEncoder()
	attrs := make([]slog.Attr, 0, len(fields))
	for _, f := range fields {
		f.AddTo(enc)
		if v, ok := enc.Fields[f.Key]; ok {
			attrs = append(attrs, slog.Any(f.Key, v))
			delete(enc.Fields, f.Key)
		}
	}
	return attrs
}
