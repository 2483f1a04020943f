package testkit

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestUniqueNames(t *testing.T) {
	a, b := Unique(t), Unique(t)
	if a == b || !strings.Contains(a, "TestUniqueNames") || strings.Contains(a, "/") {
		t.Fatalf("Unique gave %q and %q", a, b)
	}
}

func TestWaitClosedAndEventually(t *testing.T) {
	ch := make(chan struct{})
	close(ch)
	WaitClosed(t, ch, "a closed channel")
	n := 0
	Eventually(t, "the third poll", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Fatalf("polled %d times", n)
	}
}
