// Package semaphore holds the tests of the library's recipes/semaphore that
// read the semaphores' metrics back through OpenTelemetry's SDK: the lock
// name the series of either layout and of a semaphore mutex carry, the
// path or WithTelemetryName's.
package semaphore
