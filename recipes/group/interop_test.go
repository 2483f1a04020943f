package group_test

import (
	"testing"

	"github.com/gocurator/curator/internal/curatorjava"
	"github.com/gocurator/curator/internal/testkit"
	"github.com/gocurator/curator/recipes/group"
)

// Apache Curator 5.4's GroupMember (run by the Java driver) and ours in one
// group see each other's members and payloads, and each other's payload
// changes and departures.
func TestInteropWithCuratorGroupMember(t *testing.T) {
	t.Parallel()
	java := curatorjava.StartDriver(t, zkAddr)
	c := testkit.Connect(t, zkAddr, "") // no namespace: Java sees full paths
	ctx := testkit.Ctx(t)
	// A top-level path: Curator's parent creation fails for good when the
	// server reaps a shared container parent (/interop) between its steps.
	path := "/" + testkit.Unique(t)

	java.MustDo("member j " + path + " java-1 jpayload")
	m := group.New(c, path, "go-1", []byte("gpayload"))
	defer closeMember(t, m)
	startMember(t, m)
	awaitMembers(t, m, map[string]string{"java-1": "jpayload", "go-1": "gpayload"})
	testkit.Eventually(t, "Java sees both", func() bool {
		return java.MustDo("members j") == "go-1=gpayload,java-1=jpayload"
	})

	java.MustDo("memberSet j jpayload2")
	if err := m.SetPayload(ctx, []byte("gpayload2")); err != nil {
		t.Fatal(err)
	}
	awaitMembers(t, m, map[string]string{"java-1": "jpayload2", "go-1": "gpayload2"})
	testkit.Eventually(t, "Java sees the new payloads", func() bool {
		return java.MustDo("members j") == "go-1=gpayload2,java-1=jpayload2"
	})

	java.MustDo("memberClose j")
	awaitMembers(t, m, map[string]string{"go-1": "gpayload2"})
	java.MustDo("member j2 " + path + " java-2 again")
	awaitMembers(t, m, map[string]string{"go-1": "gpayload2", "java-2": "again"})
	closeMember(t, m)
	testkit.Eventually(t, "Java sees ours leave", func() bool { return java.MustDo("members j2") == "java-2=again" })
	java.MustDo("memberClose j2")
}
