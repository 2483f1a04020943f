// Package locking holds the tests of the library's recipes/locking that
// read the lock loop's metrics and spans back through OpenTelemetry's SDK:
// acquisitions, holds, hand-overs and losses by reason, the counters made
// to exist at 0 from a lock's first acquire, the acquire spans with their
// events, and the requests an acquire and a hand-over make (one round
// trip each).
package locking
