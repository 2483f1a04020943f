package leader_test

import (
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gocurator/curator/framework"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/leader"
)

// waitLogged waits until logs holds an entry with message msg and returns
// the first.
func waitLogged(t *testing.T, logs *observer.ObservedLogs, msg string) observer.LoggedEntry {
	t.Helper()
	testkit.Eventually(t, "log entry "+msg, func() bool { return logs.FilterMessage(msg).Len() > 0 })
	return logs.FilterMessage(msg).All()[0]
}

// WithLogger: the election logs its term starts and ends to the given
// logger, and none of them to the client's, which it uses otherwise.
func TestWithLogger(t *testing.T) {
	t.Parallel()
	const path = "/elections/logged"
	ctx := testkit.Ctx(t)
	ns := testkit.Unique(t)
	clientCore, clientLogs := observer.New(zap.DebugLevel)
	c := testkit.Connect(t, zkAddr, ns, framework.WithLogger(zap.New(clientCore)))
	admin := testkit.Connect(t, zkAddr, ns)
	core, logs := observer.New(zap.DebugLevel)
	e := leader.New(c, path, leader.WithID("p1"), leader.WithLogger(zap.New(core).Named("scheduler")))

	term, err := e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	leading := waitLogged(t, logs, "leading")
	if leading.LoggerName != "scheduler" || leading.Level != zap.InfoLevel {
		t.Errorf("leading: logger %q at %v, want scheduler at info", leading.LoggerName, leading.Level)
	}
	if f := leading.ContextMap(); f["path"] != path || f["id"] != "p1" {
		t.Errorf("leading: fields %v, want path %s and id p1", f, path)
	}

	// A loss: someone deletes our node.
	if err := admin.Delete(ctx, term.Node()); err != nil {
		t.Fatal(err)
	}
	testkit.WaitClosed(t, term.Done(), "the term's end after its node was deleted")
	lost := waitLogged(t, logs, "leadership lost: our node was deleted")
	if lost.ContextMap()["path"] != path {
		t.Errorf("leadership lost: fields %v, want path %s", lost.ContextMap(), path)
	}

	// A resignation.
	term, err = e.Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := term.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	waitLogged(t, logs, "resigned")

	for _, msg := range []string{"leading", "leadership lost: our node was deleted", "resigned"} {
		if n := clientLogs.FilterMessage(msg).Len(); n != 0 {
			t.Errorf("the client's logger got %d %q entries; WithLogger's should have them all", n, msg)
		}
	}

	// Without WithLogger the election logs to the client's logger, named
	// "leader".
	term, err = leader.New(c, "/elections/default").Campaign(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := waitLogged(t, clientLogs, "leading"); got.LoggerName != "leader" {
		t.Errorf("default logger name %q, want leader", got.LoggerName)
	}
	if err := term.Resign(ctx); err != nil {
		t.Fatal(err)
	}
}
