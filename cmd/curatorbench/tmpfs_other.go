//go:build !linux

package main

// isTmpfs cannot tell outside Linux.
func isTmpfs(string) bool { return false }
