package zktest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gocurator/curator/zktest"
)

// A reconfigurable ensemble publishes its members with their client
// addresses in /zookeeper/config, and a member can be replaced: a server
// started by AddServer joins, a follower leaves, and the new one serves
// once the old one is gone. (Removing the leader makes the others elect
// again, which drops their clients' connections, the reconfig's reply
// with them: the test keeps the leader.)
func TestReconfigReplaceMember(t *testing.T) {
	start := time.Now()
	ens := zktest.StartEnsembleWith(t, 3, zktest.WithReconfig())
	t.Logf("StartEnsembleWith(3, WithReconfig()) took %v", time.Since(start))
	servers := ens.Servers()
	leader, err := ens.Leader()
	if err != nil {
		t.Fatal(err)
	}
	var leaving *zktest.Server
	for _, s := range servers {
		if s != leader {
			leaving = s
			break
		}
	}
	c, _ := connect(t, []string{leader.Addr()})

	config := func() string {
		t.Helper()
		data, _, err := c.Get("/zookeeper/config")
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	got := config()
	for _, s := range servers {
		if !strings.Contains(got, s.ConfigLine()+"\n") {
			t.Fatalf("config lacks %q:\n%s", s.ConfigLine(), got)
		}
		if want := fmt.Sprintf(";%s", s.Addr()); !strings.HasSuffix(s.ConfigLine(), want) {
			t.Fatalf("ConfigLine %q does not end in the client address %s", s.ConfigLine(), want)
		}
	}

	start = time.Now()
	joiner, err := ens.AddServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("AddServer took %v", time.Since(start))
	if joiner.ID() != 4 || len(ens.Servers()) != 4 {
		t.Fatalf("joiner id %d, %d servers", joiner.ID(), len(ens.Servers()))
	}
	if _, err := c.IncrementalReconfig([]string{joiner.ConfigLine()}, []string{fmt.Sprint(leaving.ID())}, -1); err != nil {
		t.Fatal(err)
	}
	got = config()
	if !strings.Contains(got, joiner.ConfigLine()+"\n") || strings.Contains(got, leaving.ConfigLine()) {
		t.Fatalf("config after replacing server %d by 4:\n%s", leaving.ID(), got)
	}
	if err := leaving.Kill(); err != nil {
		t.Fatal(err)
	}
	direct, _ := connect(t, []string{joiner.Addr()})
	if _, err := direct.Create("/after-reconfig", nil, 0, openACL); err != nil {
		t.Fatal(err)
	}
	if err := direct.Delete("/after-reconfig", -1); err != nil {
		t.Fatal(err)
	}
}

// WithConfigHost and WithClientAddress shape the configuration clients
// read: a DNS name for the quorum address, the wildcard for the client's.
func TestReconfigConfigAddresses(t *testing.T) {
	ens := zktest.StartEnsembleWith(t, 1, zktest.WithReconfig(),
		zktest.WithConfigHost("localhost"), zktest.WithClientAddress("0.0.0.0"))
	s := ens.Servers()[0]
	c, _ := connect(t, []string{s.Addr()})
	data, _, err := c.Get("/zookeeper/config")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "server.1=localhost:") || !strings.Contains(string(data), ";0.0.0.0:") {
		t.Fatalf("config:\n%s\nwant the quorum address localhost and the client address 0.0.0.0", data)
	}
	if mode, err := s.Mode(); err != nil || mode == "standalone" {
		t.Fatalf("ensemble of one: mode %q, %v; want a reconfigurable quorum, not standalone", mode, err)
	}
}
