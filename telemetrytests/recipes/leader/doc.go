// Package leader holds the tests of the library's recipes/leader that read
// the election's metrics back through OpenTelemetry's SDK: the lock name
// its series carry, the path or WithTelemetryName's.
package leader
