// Package framework holds the tests of the library's framework package
// that read the client's metrics and spans back through OpenTelemetry's
// SDK: requests by operation and result, retries, protected-create
// recoveries, state transitions, pending guaranteed deletes, the counters
// made to exist at 0 from Connect, and the client spans under a recording
// parent.
package framework
