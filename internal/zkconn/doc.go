// Package zkconn is the client's connection layer: what go-zookeeper does
// not do, done on its connection. It sits between package framework (the
// user's floor: Client, verbs, retries, states, Watchers) and
// go-zookeeper, and never imports framework.
//
// It owns:
//   - the frames: every socket go-zookeeper dials is wrapped (Wire.Dialer,
//     Conn) and its frames are read as they pass, changing nothing;
//   - the client's own requests (AddWatch, SetWatches2, RemoveWatches,
//     pings), written between go-zookeeper's frames with xids from a range
//     go-zookeeper never uses, and their replies, taken off the socket
//     before go-zookeeper reads;
//   - the acknowledgement clock (Wire.Acked) and the negotiated timeout
//     (Wire.Timeout), which the client-side expiry counts from;
//   - the capture of create replies (Wire.Expect, Wire.Take): a created
//     node's czxid without a request;
//   - the registry of persistent watches (Registry) and their re-arming
//     on every connection, and one-shot watches served from them;
//   - the watch reset gate (Counts, Wire.WaitWatchesSet): requests wait
//     for go-zookeeper's setWatches after a reconnection;
//   - the servers go-zookeeper dials and the pace of its redials
//     (TrackedHosts, PacedHosts).
//
// The opcodes, xids, request bodies and request sizes are package
// zkwire's.
//
// # Reading frames
//

// The client wraps every connection it dials so that three things go-zookeeper
// keeps to itself can be read off the wire as the frames pass by:
//   - the session timeout the server negotiated (client-side expiry needs
//     it), from the connect response;
//   - when the server last heard from us, as far as we can prove it: the
//     send time of the last request a reply came back for (client-side
//     expiry counts from it; framework's sessionDeadline);
//   - the zxid of the transaction that created a node (its czxid), from the
//     reply header of a create the client asked about (StoringStatIn), so a
//     lock learns its fencing token without an extra request.
//
// Frames are [int32 length][payload]. A request's payload starts with
// [int32 xid][int32 opcode], a create's body with [int32 len][path]; a
// reply's with [int32 xid][int64 zxid][int32 err], a create's body with the
// created path. Reading them never changes a byte that passes; if a frame is
// not understood, nothing is recorded from it, it is reported (counted by
// Wire.Unread, and a debug line in the client's log), and the caller falls
// back to reading the Stat with a request.
//
// # Persistent watches
//
// Persistent watches (ZooKeeper 3.6+ AddWatch) without forking
// go-zookeeper, which lacks them: the client owns go-zookeeper's socket
//
//	and writes its own requests between go-zookeeper's frames,
//
// with xids from a range go-zookeeper never uses (isOwnXid), and takes
// their replies off the socket before go-zookeeper reads. The registry
// below is the desired state: for each server path, the subscribers that
// want events of it (Watchers, and one-shot watches served from it), and
// the mode the server holds (recursive if any subscriber wants the
// subtree).
//
// The rules, and why:
//   - One server watch per path per session. ZooKeeper 3.6-3.8 keeps one
//     mode per path and session (ZOOKEEPER-4466): a one-shot watch set on
//     a path with a persistent watch turns it into a one-shot, and a
//     persistent watch added to a recursive one's path narrows it. So a
//     path holds one server watch, persistent or recursive; a one-shot
//     watch (GetW, ExistsW, ChildrenW) asked for on it is served from its
//     events instead of being set on the server, and go-zookeeper's
//     setWatches after a reconnection has the path taken out of its lists.
//   - Segment-wise matching: a recursive watch on /a gets events of /a and
//     of paths under /a/, never /ab.
//   - NodeChildrenChanged never reaches a recursive subscriber: 3.6-3.8
//     keep the recursive watch in the child table too and send the
//     children changes of every node below (ZOOKEEPER-4475). A
//     non-recursive subscriber of a path held recursive has its children
//     changes made from the creations and deletions of its children.
//   - Re-armed on every new connection and every new session, at the
//     connect response, before go-zookeeper sends anything: one
//     SetWatches2 (105) with the persistent lists on a server known to
//     have it (srvr says 3.6 or later), else one AddWatch per path; never
//     105 or 106 to a server known to lack them (srvr says older, or it
//     answered an AddWatch with UNIMPLEMENTED, as 3.5 does before it drops
//     the connection). Every subscriber is then told (resync): events of
//     the time between connections are lost, by ZooKeeper's design.
//   - Removed (RemoveWatches, type Any) once the last subscriber of a path
//     goes, while connected; a path nobody wants is not re-armed.
//
// # The watch reset gate
//
// go-zookeeper v1.0.4 reads its lastZxid, unsynchronised, while it builds
// the requests that set the session's watches again after a reconnection
// (sendSetWatches), as its receive loop, already running, writes it for
// every reply (go-zookeeper/zk#35, unfixed upstream). A request of ours
// sent the instant the session is back gets a reply inside that window: a
// data race the race detector reports (and a relative zxid from the wrong
// moment). So after a reconnection of a session with watches set, requests
// wait until go-zookeeper has written its setWatches request, which it does
// only after those reads (Conn sees the frame go out), or at most
// resetWait. Whether go-zookeeper has watches to set again is known
// from our own count of the watches we set and saw fire: the count is taken
// before each watch is set, so it never says none while go-zookeeper has
// some.
//
// A connection with none to set again (a new session) has a narrower window
// of the same race: go-zookeeper runs sendSetWatches just after it starts
// its receive loop, and if the reply to one of its one-shot watch reads
// passes first, sendSetWatches finds that watch and reads lastZxid while
// the receive loop writes it for the next reply. So once such a reply has
// passed, the replies after it wait for the setWatches request (which then
// comes, written after the read) or for the rest of the settle window, 10
// ms from the connect response, by which time the loop goroutine, which
// has nothing to block on between the two, has run sendSetWatches. What is
// left is a loop goroutine descheduled for longer than the window between
// two statements; no upstream release fixes the race (v1.0.4 is the
// newest). The window is short because it costs: a recipe that starts
// the moment its client connects has its replies after its first watch
// held to the window's end (100 ms made timing-sensitive tests of the
// double barrier and the queue fail; 10 ms did not).
package zkconn
