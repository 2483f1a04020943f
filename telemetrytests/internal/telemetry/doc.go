// Package telemetry holds the tests of the library's internal/telemetry
// that need OpenTelemetry's SDK: that an SDK tracer provider, given
// explicitly or set as the global one, is taken for one that records.
package telemetry
