// Package zapslog is a zapcore.Core that writes to a slog.Handler: what
// lets a client configured with framework.WithSlog keep handing out
// *zap.Logger values (its own, the recipes', go-zookeeper's) while every
// record reaches the application's standard-library logger. Levels map to
// slog's (DPanic, Panic and Fatal to Error), a named logger's name becomes
// the attribute "logger", and zap fields become attributes rendered by
// zap's own encoder.
package zapslog

import (
	"context"
	"log/slog"

	"go.uber.org/zap/zapcore"
)

// New returns a core that writes to h. h must not be nil.
func New(h slog.Handler) zapcore.Core { return &core{h: h} }

// core is a zapcore.Core that writes to a slog.Handler.
type core struct {
	h slog.Handler // With's fields are added to it as attributes
}

// Level maps a zap level to slog's: DPanic, Panic and Fatal to Error.
func Level(l zapcore.Level) slog.Level {
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
func (s *core) Enabled(l zapcore.Level) bool {
	return s.h.Enabled(context.Background(), Level(l))
}

// With returns a core whose records carry fields.
func (s *core) With(fields []zapcore.Field) zapcore.Core {
	return &core{h: s.h.WithAttrs(attrs(fields))}
}

// Check adds the core to ce when the level is enabled.
func (s *core) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if s.Enabled(e.Level) {
		return ce.AddCore(e, s)
	}
	return ce
}

// Write hands one record to the handler.
func (s *core) Write(e zapcore.Entry, fields []zapcore.Field) error {
	r := slog.NewRecord(e.Time, Level(e.Level), e.Message, 0)
	if e.LoggerName != "" {
		r.AddAttrs(slog.String("logger", e.LoggerName))
	}
	r.AddAttrs(attrs(fields)...)
	return s.h.Handle(context.Background(), r)
}

// Sync has nothing to flush: handlers write as they go.
func (s *core) Sync() error { return nil }

// attrs turns zap fields into attributes, through zap's own encoder so
// that every field type (errors, durations, objects) is rendered as zap
// would.
func attrs(fields []zapcore.Field) []slog.Attr {
	if len(fields) == 0 {
		return nil
	}
	enc := zapcore.NewMapObjectEncoder()
	out := make([]slog.Attr, 0, len(fields))
	for _, f := range fields {
		f.AddTo(enc)
		if v, ok := enc.Fields[f.Key]; ok {
			out = append(out, slog.Any(f.Key, v))
			delete(enc.Fields, f.Key)
		}
	}
	return out
}
