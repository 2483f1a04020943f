// Package discovery holds the tests of the library's recipes/discovery that
// read its metrics back through OpenTelemetry's SDK: malformed instances,
// skipped, are counted in curator.discovery.malformed.
package discovery
