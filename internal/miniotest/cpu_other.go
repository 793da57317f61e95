//go:build !linux

package miniotest

import "time"

// ProcessCPU is not implemented here.
func ProcessCPU(int) (time.Duration, bool) { return 0, false }
