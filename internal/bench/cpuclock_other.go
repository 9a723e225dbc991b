//go:build !linux

package bench

import "time"

const cpuClock = "wall"

// threadCPU is unknown here: measureChecks falls back to the wall clock.
func threadCPU() time.Duration { return 0 }
