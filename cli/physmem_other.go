//go:build !linux && !darwin

package cli

// physicalMemory returns the machine's RAM in bytes: unknown (0) here, so
// only an explicit --memory-limit bounds a run.
func physicalMemory() uint64 { return 0 }
