// Package rwlock holds the tests of the library's recipes/rwlock that read
// the read and write locks' metrics back through OpenTelemetry's SDK: the
// lock name their series carry, the path or WithTelemetryName's.
package rwlock
