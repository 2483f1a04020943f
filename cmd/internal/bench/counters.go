package bench

import (
	"fmt"
	"strconv"
	"strings"
)

// ServerCounters are cumulative counters of one ZooKeeper server, read from
// its mntr four-letter word (ZooKeeper 3.6+ with the default metrics
// provider). The difference of two readings counts what the server did in
// between, whichever client asked.
type ServerCounters struct {
	// Reads is zk_cnt_readlatency: requests answered without a
	// transaction (exists, getData, getChildren, ...; pings too, which a
	// busy session does not send).
	Reads int64 `json:"reads"`
	// Writes is zk_cnt_updatelatency: requests that went through the
	// transaction log (create, delete, setData, multi, session create and
	// close; a write that fails, such as a delete of a missing node, too).
	Writes int64 `json:"writes"`
	// Notifications is the number of watch notifications sent: the sum of
	// zk_sum_node_{created,deleted,changed,children}_watch_count (each
	// firing adds the number of watchers it notified).
	Notifications int64 `json:"notifications"`
	// Packets is zk_packets_received: every frame from clients, pings and
	// connection requests included.
	Packets int64 `json:"packets"`
}

// Requests is Reads + Writes.
func (c ServerCounters) Requests() int64 { return c.Reads + c.Writes }

// Sub returns c - o, field by field.
func (c ServerCounters) Sub(o ServerCounters) ServerCounters {
	return ServerCounters{
		Reads:         c.Reads - o.Reads,
		Writes:        c.Writes - o.Writes,
		Notifications: c.Notifications - o.Notifications,
		Packets:       c.Packets - o.Packets,
	}
}

// ReadServerCounters asks the first server of addr for mntr.
func ReadServerCounters(addr string) (ServerCounters, error) {
	b, err := fourLetter(addr, "mntr")
	if err != nil {
		return ServerCounters{}, err
	}
	return parseMntr(b)
}

// parseMntr reads the counters from mntr's tab-separated "key value" lines.
func parseMntr(text string) (ServerCounters, error) {
	vals := map[string]int64{}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if !ok {
			continue
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			continue
		}
		vals[k] = int64(n)
	}
	need := []string{"zk_cnt_readlatency", "zk_cnt_updatelatency", "zk_packets_received"}
	for _, k := range need {
		if _, ok := vals[k]; !ok {
			return ServerCounters{}, fmt.Errorf("mntr has no %s (ZooKeeper 3.6 or later with the default metrics provider is needed)", k)
		}
	}
	c := ServerCounters{
		Reads:   vals["zk_cnt_readlatency"],
		Writes:  vals["zk_cnt_updatelatency"],
		Packets: vals["zk_packets_received"],
	}
	for _, kind := range []string{"created", "deleted", "changed", "children"} {
		c.Notifications += vals["zk_sum_node_"+kind+"_watch_count"]
	}
	return c, nil
}
