// Package conformance has no code: its tests are the conformance suite
// that every lock handle and hold of every recipe (and, where the rules
// apply, every barrier, counter and value) must pass alike, against
// a real ZooKeeper (see doc_test.go and docs/handles.md). A new recipe adds
// its kind there.
package conformance
