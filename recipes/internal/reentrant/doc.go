// Package reentrant is the reentrant lock handle of the built-in lock
// recipes (mutex.Mutex, rwlock.Lock) on the lock loop: a hold count per
// handle, one acquire at a time, revocation, and the cohort of handles of
// one client that share one node and pass the hold among themselves
// (mutex.WithLocalHandover). It is a helper of those recipes, not part of
// the loop's SPI (recipes/locking), whose design it builds on.
package reentrant
