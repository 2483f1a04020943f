package zapslog

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

func TestLevel(t *testing.T) {
	for _, tc := range []struct {
		name string
		zap  zapcore.Level
		want slog.Level
	}{
		{"debug", zapcore.DebugLevel, slog.LevelDebug},
		{"info", zapcore.InfoLevel, slog.LevelInfo},
		{"warn", zapcore.WarnLevel, slog.LevelWarn},
		{"error", zapcore.ErrorLevel, slog.LevelError},
		{"dpanic", zapcore.DPanicLevel, slog.LevelError},
		{"panic", zapcore.PanicLevel, slog.LevelError},
		{"fatal", zapcore.FatalLevel, slog.LevelError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Level(tc.zap); got != tc.want {
				t.Errorf("zap %v -> slog %v, want %v", tc.zap, got, tc.want)
			}
		})
	}
}

// Records reach the handler with their level, the logger's name, the
// fields of With and of the call, rendered as zap renders them.
func TestCore(t *testing.T) {
	for _, tc := range []struct {
		name  string
		level slog.Level // the handler's
		log   func(*zap.Logger)
		want  []string // in the output
		none  bool     // nothing written
	}{
		{
			name:  "fields and name",
			level: slog.LevelDebug,
			log: func(l *zap.Logger) {
				l.Named("mutex").With(zap.String("path", "/locks/a")).Warn("lock lost",
					zap.Error(errors.New("boom")), zap.Duration("held", 2*time.Second), zap.Int("n", 3))
			},
			want: []string{`level=WARN msg="lock lost"`, "logger=mutex", "path=/locks/a", "error=boom", "held=2s", "n=3"},
		},
		{
			name:  "debug enabled",
			level: slog.LevelDebug,
			log:   func(l *zap.Logger) { l.Debug("quiet") },
			want:  []string{"level=DEBUG msg=quiet"},
		},
		{
			name:  "debug filtered by the handler",
			level: slog.LevelInfo,
			log:   func(l *zap.Logger) { l.Debug("quiet") },
			none:  true,
		},
		{
			name:  "dpanic as error",
			level: slog.LevelInfo,
			log:   func(l *zap.Logger) { l.DPanic("odd") },
			want:  []string{"level=ERROR msg=odd"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			h := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level})
			tc.log(zap.New(New(h)))
			out := buf.String()
			if tc.none != (out == "") {
				t.Fatalf("output %q, want none: %v", out, tc.none)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
	c := New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	if c.Enabled(zapcore.DebugLevel) || !c.Enabled(zapcore.ErrorLevel) || c.Sync() != nil {
		t.Fatal("levels are not the handler's")
	}
}
