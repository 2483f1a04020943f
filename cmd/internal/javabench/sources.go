package javabench

import (
	"embed"

	"github.com/gocurator/curator/internal/curatorjava"
)

// sources holds Bench.java, compiled on first use by curatorjava into its
// class cache.
//
//go:embed java/*.java
var sources embed.FS

// CompiledClasses returns a directory holding Bench.java's compiled
// classes, compiling them first if needed (curatorjava.CompiledClassesOf).
// Errors wrap curatorjava.ErrNotInstalled when Java or the Curator jars are
// missing.
func CompiledClasses() (string, error) { return curatorjava.CompiledClassesOf(sources) }
