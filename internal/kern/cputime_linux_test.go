package kern

import (
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// threadCPU measures a benchmark loop in the CPU time of the thread that
// runs it, next to the wall clock: the goroutine is locked to its thread.
type threadCPU struct{ start time.Duration }

func startThreadCPU(b *testing.B) threadCPU {
	runtime.LockOSThread()
	b.Cleanup(runtime.UnlockOSThread)
	return threadCPU{cpuNow(b)}
}

func cpuNow(b *testing.B) time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		b.Fatalf("clock_gettime: %v", err)
	}
	return time.Duration(ts.Nano())
}

// report adds unit (work per op / 1e9 per wall second) and "cpu-"+unit
// (per second of the thread's CPU time).
func (c threadCPU) report(b *testing.B, work float64, unit string) {
	cpu := cpuNow(b) - c.start
	b.ReportMetric(work*float64(b.N)/b.Elapsed().Seconds()/1e9, unit)
	if cpu > 0 {
		b.ReportMetric(work*float64(b.N)/cpu.Seconds()/1e9, "cpu-"+unit)
	}
}
