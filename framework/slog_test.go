package framework

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
)

// lockedBuffer is a bytes.Buffer safe for the handler's concurrent writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The client's own logs (a state change at Info) and a recipe's, through
// Logger, reach a slog handler with their level, name and fields.
func TestWithSlog(t *testing.T) {
	var buf lockedBuffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := connectNS(t, newNamespace(t), WithSlog(l))
	eventually(t, testTimeout, "a state change logged", func() (bool, error) {
		return strings.Contains(buf.String(), "level=INFO"), nil
	})
	c.Logger().Named("mutex").With(zap.String("path", "/locks/a")).Warn("lock lost",
		zap.Error(errors.New("boom")), zap.Duration("held", 2*time.Second), zap.Int("n", 3))
	c.Logger().Debug("quiet")
	out := buf.String()
	for _, want := range []string{
		`level=WARN msg="lock lost"`, "logger=mutex", "path=/locks/a", "error=boom", "held=2s", "n=3",
		`level=DEBUG msg=quiet`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("slog output lacks %q:\n%s", want, out)
		}
	}
	if _, err := Connect(testCtx(t), server(t).ConnectString(), WithSlog(nil)); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("WithSlog(nil): %v, want ErrInvalidOption", err)
	}
}
