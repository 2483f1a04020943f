// Package discovery provides service discovery on ZooKeeper, wire-compatible
// with Curator's curator-x-discovery, so that Go services register with and
// find the services of Spring Cloud Zookeeper and Apache Dubbo fleets.
//
// # Znode layout
//
// Every instance is one node <basePath>/<service>/<id> (Curator's
// layout): EPHEMERAL for Dynamic instances, EPHEMERAL_SEQUENTIAL named
// <id><sequence> for DynamicSequential, PERSISTENT for Static and
// Permanent; missing parents are made as containers. The node holds the
// instance as the JSON Curator 5.4's JsonInstanceSerializer writes, byte for
// byte (Instance.MarshalJSON): by default without the "enabled" field, as
// Curator's default "compatible" serializer, or with it (WithEnabledField).
// The payload is kept as raw JSON, so Jackson's "@class" type tag and every
// byte of a Java payload survive a Go round trip; ZookeeperInstance,
// SpringCloudPayload, DubboPayload and TypedPayload build and read the
// common ones. docs/discovery.md shows the JSON.
//
// # Guarantees
//
// Register keeps a Dynamic instance registered through a node.Node
// (recipes/node): a reconnection in the same session changes nothing (no
// flap, where Curator deletes and re-creates every instance); after the
// session is lost the instance is registered again in the new session, once
// the old node has gone, with the data of the latest Update; a node of
// another session with the same id is never deleted or overwritten.
// A restarted process whose previous session's node still holds its id
// waits for that node to go (FailIfOwned refuses instead). Unregister is
// owner-checked and guaranteed, so an Unregister racing a reconnection
// leaves nothing behind; a write abandoned when its ctx ends is cleaned
// up once it has had its turn, so no instance is left that the caller
// was told is not registered. Close unregisters the Dynamic instances and
// keeps the Static and Permanent ones (CURATOR-94). Empty IDs and
// addresses get the defaults of Curator's builder (RegisterInstance
// reports them).
//
// ServiceCache follows one service's instances with recipes/cache, from an
// empty or missing service on, through the service node's deletion and
// re-creation; Provider picks an instance from it (round robin, random,
// sticky, filters, Curator's down-instance policy). Instance JSON is read
// as Curator 5.4 reads it, Jackson's default coercions included
// ("port":"8080", 8080.0...); instance nodes Curator cannot read either
// are skipped, logged and counted (curator.discovery.malformed), never
// hiding the valid ones.
//
// # Connection loss
//
// Calls retry under the client's retry policy and honour ctx. Caches and
// registrations ride out disconnections and session loss; a cache reads the
// service again after each reconnection. Providers pick from memory.
package discovery
