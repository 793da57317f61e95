package cli

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkReadShortSequences: read with the automatic memory limit
// against --memory-limit off, in file and window order, on a corpus whose
// index outweighs its window: 40 M one-line sequences (549 MB of text, an
// index of about 1.2 GB on the heap). The limit must leave the live data
// room (source.RaiseLimit): a limit just above them makes the collector
// run without freeing anything. Reports seconds per read of each, the
// ratio auto / off per order, and each read's peak resident set (VmHWM). It writes the corpus once into
// BATCHPREP_BENCH_DIR (kept) or a temporary directory (removed), so it runs
// only with BATCHPREP_BENCH_SHORT=1:
//
//	BATCHPREP_BENCH_SHORT=1 go test -run '^$' -bench ReadShortSequences -benchtime 2x ./cli
func BenchmarkReadShortSequences(b *testing.B) {
	if os.Getenv("BATCHPREP_BENCH_SHORT") == "" {
		b.Skip("set BATCHPREP_BENCH_SHORT=1 (writes a 549 MB corpus)")
	}
	dir := os.Getenv("BATCHPREP_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	path := filepath.Join(dir, "short-40M.ctf")
	if _, err := os.Stat(path); err != nil {
		writeShortSequences(b, path, 40_000_000)
	}
	// Each read is a process of its own, as users run it (the test binary
	// running batchprep), so that no read inherits another's heap.
	read := func(order, limit string) (time.Duration, int64) {
		cmd := exec.Command(os.Args[0], "read", path, "--stream", "x:1", "--format", "summary", "--randomize", order, "--memory-limit", limit)
		cmd.Env = append(os.Environ(), childEnv+"=1")
		var e strings.Builder
		cmd.Stderr = &e
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("read --randomize %s --memory-limit %s: %v: %s", order, limit, err, e.String())
		}
		return time.Since(start), cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	}
	took, peak := map[string]time.Duration{}, map[string]int64{}
	for b.Loop() {
		for _, order := range []string{"none", "window"} {
			for _, limit := range []string{"auto", "off"} {
				d, rss := read(order, limit)
				took[order+"/"+limit] += d
				peak[order+"/"+limit] = max(peak[order+"/"+limit], rss)
			}
		}
	}
	n := float64(b.N)
	for _, order := range []string{"none", "window"} {
		b.ReportMetric(took[order+"/auto"].Seconds()/n, order+"-auto-s")
		b.ReportMetric(took[order+"/off"].Seconds()/n, order+"-off-s")
		b.ReportMetric(took[order+"/auto"].Seconds()/took[order+"/off"].Seconds(), order+"-auto/off")
		b.ReportMetric(float64(peak[order+"/auto"])/(1<<20), order+"-auto-VmHWM-MiB")
		b.ReportMetric(float64(peak[order+"/off"])/(1<<20), order+"-off-VmHWM-MiB")
	}
}

// writeShortSequences writes n one-line sequences "i |x v" to path,
// through a temporary file renamed into place.
func writeShortSequences(b *testing.B, path string, n int) {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range n {
		fmt.Fprintf(w, "%d |x %d\n", i, i%7)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		b.Fatal(err)
	}
}
