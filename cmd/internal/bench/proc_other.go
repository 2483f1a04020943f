//go:build !unix

package bench

import "time"

// processCPU is unknown here: CPU columns stay empty.
func processCPU() time.Duration { return -1 }
