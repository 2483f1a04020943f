//go:build unix && !linux && !aix

package main

// adoptOrphans does nothing: only Linux has child subreapers. The
// command's orphans go to init, which reaps them.
func adoptOrphans() {}
