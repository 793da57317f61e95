//go:build !linux

package kern

import "testing"

// threadCPU reports wall-clock figures only where the thread's CPU clock is
// not read (see cputime_linux_test.go).
type threadCPU struct{}

func startThreadCPU(b *testing.B) threadCPU { return threadCPU{} }

func (threadCPU) report(b *testing.B, work float64, unit string) {
	b.ReportMetric(work*float64(b.N)/b.Elapsed().Seconds()/1e9, unit)
}
