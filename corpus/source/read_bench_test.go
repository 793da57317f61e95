package source

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/randomize"
	"github.com/batchprep/batchprep/internal/shared"
)

// atisCopies is how many times BenchmarkReadATIS replicates ATIS train
// (3.0 MB): 150 copies, 455 MB.
const atisCopies = 150

var (
	atisOnce sync.Once
	atisPath string
	atisErr  error
)

// atisBig writes ATIS train replicated atisCopies times, once per process:
// into BATCHPREP_BENCH_DIR (kept and reused) or a temporary directory that
// TestMain removes.
func atisBig(b *testing.B) string {
	src := shared.Need(b, "ctf", "atis", "atis.train.ctf")
	atisOnce.Do(func() {
		dir := os.Getenv("BATCHPREP_BENCH_DIR")
		if dir == "" {
			if ctfDir == "" {
				ctfDir, atisErr = os.MkdirTemp("", "batchprep-bench-")
			}
			dir = ctfDir
		}
		p := filepath.Join(dir, fmt.Sprintf("atis-train-x%d.ctf", atisCopies))
		if _, err := os.Stat(p); err == nil {
			atisPath = p
			return
		}
		data, err := os.ReadFile(src)
		if err != nil {
			atisErr = err
			return
		}
		if !bytes.HasSuffix(data, []byte("\n")) {
			data = append(data, '\n')
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			atisErr = err
			return
		}
		tmp := p + ".tmp"
		f, err := os.Create(tmp)
		if err != nil {
			atisErr = err
			return
		}
		for range atisCopies {
			if _, err := f.Write(data); err != nil {
				f.Close()
				atisErr = err
				return
			}
		}
		if err := f.Close(); err != nil {
			atisErr = err
			return
		}
		atisErr = os.Rename(tmp, p)
		atisPath = p
	})
	if atisErr != nil {
		b.Fatal(atisErr)
	}
	return atisPath
}

// BenchmarkReadATIS is `batchprep read` with its default settings (1 MiB
// chunks, a 128-chunk window, 64 chunks of the next window prefetched,
// minibatches of 1024 samples) on ATIS train x150: one sweep, the index
// pass included, in file order (none, the baseline) and in window order
// through the same Source code with the same chunk size. Each iteration
// reads the file once in each order, alternating, so both figures see the
// same machine load, then once more in window order with chunks kept in
// file layout (not arranged, see arrange.go): it reports MB/s of each (none-MB/s, window-MB/s), their
// time ratio (window/none), the process's CPU seconds (user+system, every
// thread) per read of each (none-cpu-s, window-cpu-s) and their ratio
// (window/none-cpu), the steadier figures on a loaded machine, the same
// two ratios for the unarranged window read (unarranged/none,
// unarranged/none-cpu), the collector's cycles per read of each
// (none-gc, window-gc) and the peak resident set of the process (VmHWM-MiB:
// for both orders together; the CLI figures of docs/performance.md measure
// each order in its own process).
func BenchmarkReadATIS(b *testing.B) {
	path := atisBig(b)
	info, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	streams := []corpus.Stream{{Name: "S0", Dim: 943, Sparse: true}, {Name: "S1", Dim: 26, Sparse: true}, {Name: "S2", Dim: 129, Sparse: true}}
	read := func(kind string, fileLayout bool) (wall, cpu time.Duration, gcs uint32) {
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		t0, c0 := time.Now(), cpuTime()
		r, err := ctf.Open(path, ctf.Config{Streams: streams, ChunkBytes: 1 << 20})
		if err != nil {
			b.Fatal(err)
		}
		s, err := New(r, Config{Prefetch: true, PrefetchChunks: 64, Schedule: ConstantSchedule(1024),
			Randomize: randomize.Config{Kind: kind, WindowChunks: 128}, fileLayout: fileLayout})
		if err != nil {
			b.Fatal(err)
		}
		for s.Epoch() < 1 {
			if _, err := s.Next(); err != nil {
				b.Fatal(err)
			}
		}
		s.Close()
		r.Close()
		wall, cpu = time.Since(t0), cpuTime()-c0
		runtime.ReadMemStats(&ms1)
		return wall, cpu, ms1.NumGC - ms0.NumGC
	}
	var tNone, tWin, tFile, cNone, cWin, cFile time.Duration
	var gcNone, gcWin uint32
	b.SetBytes(3 * info.Size())
	for b.Loop() {
		d, c, g := read("none", false)
		tNone, cNone, gcNone = tNone+d, cNone+c, gcNone+g
		d, c, g = read("window", false)
		tWin, cWin, gcWin = tWin+d, cWin+c, gcWin+g
		d, c, _ = read("window", true)
		tFile, cFile = tFile+d, cFile+c
	}
	n := float64(b.N)
	mb := float64(info.Size()) / 1e6
	b.ReportMetric(mb*n/tNone.Seconds(), "none-MB/s")
	b.ReportMetric(mb*n/tWin.Seconds(), "window-MB/s")
	b.ReportMetric(tWin.Seconds()/tNone.Seconds(), "window/none")
	b.ReportMetric(cNone.Seconds()/n, "none-cpu-s")
	b.ReportMetric(cWin.Seconds()/n, "window-cpu-s")
	b.ReportMetric(cWin.Seconds()/cNone.Seconds(), "window/none-cpu")
	b.ReportMetric(tFile.Seconds()/tNone.Seconds(), "unarranged/none")
	b.ReportMetric(cFile.Seconds()/cNone.Seconds(), "unarranged/none-cpu")
	b.ReportMetric(float64(gcNone)/n, "none-gc")
	b.ReportMetric(float64(gcWin)/n, "window-gc")
	b.ReportMetric(float64(vmHWM())/(1<<20), "VmHWM-MiB")
}

// vmHWM is the process's peak resident set (Linux; 0 elsewhere).
func vmHWM() uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// cpuTime is the process's user+system CPU time so far (every thread).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
