// Package telemetrytests is the root of the module that holds the
// library's tests which read its metrics and spans back through the
// OpenTelemetry SDK (its in-memory metric reader and span recorder).
//
// They are a module of their own so that the library's go.mod requires the
// OpenTelemetry API alone: a module's test dependencies are requirements
// of its go.mod, which every user of the library would inherit. The tests
// are external tests of the library's packages, one package here per
// package tested, at the same path under telemetrytests/; as a module
// under the library's path, they may use its internal packages
// (internal/testkit). go.work joins the module to the library; make test,
// make lint and make tidy cover it like the others.
package telemetrytests
