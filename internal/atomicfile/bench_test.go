package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkWrite writes 64 MiB: with Write (temporary file, writes of at
// most PieceBytes, fsync, rename) and, as the baseline, with os.WriteFile
// (one write(2) of the whole buffer, no fsync) and with one write(2) of
// the whole buffer to a file that is then fsynced (what Write did before
// it wrote in pieces). Each reports the CPU time of a write (cpu-s/op):
// the cost of a large write(2) on some kernels is system time, and the
// fsync's is mostly the disk's. The file is removed after each write, and
// the next waits 3 s (untimed): a VM that reports free memory to its host
// does so after 2 s, and a write into memory just freed costs less than
// one into memory the host took back, as a write of a new file usually is.
func BenchmarkWrite(b *testing.B) {
	data := make([]byte, 64<<20)
	for i := range data {
		data[i] = byte(i)
	}
	dir := b.TempDir()
	for _, c := range []struct {
		name  string
		write func(p string) error
	}{
		{"pieces", func(p string) error { return Write(p, data, 0o644) }},
		{"os.WriteFile", func(p string) error { return os.WriteFile(p, data, 0o644) }},
		{"one-write-fsync", func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			if _, err := f.Write(data); err != nil {
				return err
			}
			return f.Sync()
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			p := filepath.Join(dir, c.name)
			var cpu time.Duration
			for b.Loop() {
				c0 := cpuTime()
				if err := c.write(p); err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - c0
				b.StopTimer()
				os.Remove(p)
				time.Sleep(3 * time.Second)
				b.StartTimer()
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}
