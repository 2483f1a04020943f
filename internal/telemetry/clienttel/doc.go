// Package clienttel holds the instruments of framework's Client: the
// duration of each request by operation and result (with a child span
// under a span that records), retries, connection-state transitions and
// the connection-state gauge, session expirations, protected-create
// recoveries and the background deletes pending. docs/observability.md
// lists what they record. Every measurement's options are computed once,
// when the client connects, so that recording one allocates nothing.
//
// framework keeps what users see (WithMeterProvider, WithTracerProvider,
// ScopeName, and the Client's MeterProvider, TracerProvider and Tracing);
// this package knows nothing of framework, and framework maps its own
// errors (ErrClosed) onto Result before handing them over.
package clienttel
