package train_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/train"
	"github.com/batchprep/batchprep/graph/train/model"
)

// BenchmarkTrainScaleIO: one epoch
// of graph/gen's power-law graph (scaleGraph; BATCHPREP_SCALE_ENTITIES entities, default 1,000,000, and
// BATCHPREP_SCALE_EDGES edges, default 10,000,000) with the FB15k-237
// settings at dimension 100, 2 workers, for P = 1 and 8 partitions
// (BATCHPREP_SCALE_PARTITIONS, a comma-separated list, for others), with
// the partition I/O behind training (io=overlap) and with it written in
// turn (io=sequential, the baseline in the same run), for P = 8 with a
// checkpoint committed after every bucket (io=overlap/commit=every-bucket,
// the baseline of the default, a commit every P buckets; so for every
// P > 1), and for P = 1
// without model's memory hints (io=overlap/hints=off: tables on small
// pages, no prefetching; model.SetMemoryHints); with
// BATCHPREP_SCALE_DEFAULTS_ONLY=1 only io=overlap, train's defaults, for
// a comparison across P in one run. It reports edges/s
// (wall clock, the whole epoch with its checkpoints), cpu-edges/s (per
// second of the process's CPU time), iowait-% (the share
// of the epoch its buckets waited for partition loads and checkpoint
// writes, Trainer.IOWait), and the epoch's partition traffic in MiB
// (read-MiB, written-MiB, as plan --simulate predicts it), and huge-MiB,
// the most of the process's memory on transparent huge pages after a
// bucket (0 when the kernel gives none). Large: runs
// only with BATCHPREP_SCALE=1 (bash .ci/bench scale), with -benchtime 1x;
// it needs about 2 GiB of memory and of disk at the defaults.
func BenchmarkTrainScaleIO(b *testing.B) {
	if os.Getenv("BATCHPREP_SCALE") != "1" {
		b.Skip("set BATCHPREP_SCALE=1 to run (a generated graph of 10 M edges)")
	}
	entities := envInt(b, "BATCHPREP_SCALE_ENTITIES", 1_000_000)
	edges := envInt(b, "BATCHPREP_SCALE_EDGES", 10_000_000)
	for _, parts := range envCounts(b, "BATCHPREP_SCALE_PARTITIONS", []int{1, 8}) {
		dir := b.TempDir()
		cfg, err := config.Parse([]byte(scaleConfig(dir, 1000, parts)), "toml")
		if err != nil {
			b.Fatal(err)
		}
		if err := scaleGraph(b, cfg, dir, entities, edges); err != nil {
			b.Fatal(err)
		}
		st := openStore(b, cfg)
		runs := []scaleRun{{mode: "overlap"}, {mode: "sequential"}}
		switch {
		case os.Getenv("BATCHPREP_SCALE_DEFAULTS_ONLY") == "1":
			runs = runs[:1]
		case parts == 1:
			runs = append(runs, scaleRun{mode: "overlap", noHints: true})
		default:
			runs = append(runs, scaleRun{mode: "overlap", everyBucket: true})
		}
		for _, run := range runs {
			mode, name := run.mode, "io="+run.mode
			if run.noHints {
				name += "/hints=off"
			}
			if run.everyBucket {
				name += "/commit=every-bucket"
			}
			b.Run(fmt.Sprintf("P=%d/%s", parts, name), func(b *testing.B) {
				defer model.SetMemoryHints(model.SetMemoryHints(!run.noHints))
				if run.everyBucket {
					cfg.CheckpointBuckets = 1
					defer func() { cfg.CheckpointBuckets = 0 }()
				}
				var wall, wait, cpu time.Duration
				var trained int64
				var io train.EpochIO
				var huge int64
				for i := range b.N {
					// Freed memory goes back to the kernel, so that this
					// run's tables take the pages its setting asks for.
					debug.FreeOSMemory()
					cfg.CheckpointPath = filepath.Join(dir, fmt.Sprintf("ckpt-%s-%d", strings.ReplaceAll(name, "/", "-"), i))
					tr, err := train.New(cfg, st, train.Options{SequentialIO: mode == "sequential", Bucket: func(train.Event) {
						huge = max(huge, anonHugeBytes())
					}})
					if err != nil {
						b.Fatal(err)
					}
					start, cpu0 := time.Now(), cpuTime()
					if err := tr.Run(context.Background()); err != nil {
						b.Fatal(err)
					}
					wall += time.Since(start)
					cpu += cpuTime() - cpu0
					load, write := tr.IOWait()
					wait += load + write
					trained += tr.Manifest().Edges
					io = tr.EpochIO()[0]
					if err := os.RemoveAll(cfg.CheckpointPath); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(trained)/wall.Seconds(), "edges/s")
				b.ReportMetric(float64(trained)/cpu.Seconds(), "cpu-edges/s")
				b.ReportMetric(100*wait.Seconds()/wall.Seconds(), "iowait-%")
				b.ReportMetric(float64(io.LoadBytes)/(1<<20), "read-MiB")
				b.ReportMetric(float64(io.SaveBytes)/(1<<20), "written-MiB")
				b.ReportMetric(float64(huge)/(1<<20), "huge-MiB")
			})
		}
	}
}

// scaleRun is one of BenchmarkTrainScaleIO's runs: the partition I/O
// ("overlap" or "sequential"), whether model's memory hints are off, and
// whether a checkpoint is committed after every bucket (the baseline of
// the default, one every P buckets).
type scaleRun struct {
	mode        string
	noHints     bool
	everyBucket bool
}

// anonHugeBytes is the process's memory on transparent huge pages
// (AnonHugePages of /proc/self/smaps_rollup), 0 where that is not known.
func anonHugeBytes() int64 {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "AnonHugePages:" {
			kib, _ := strconv.ParseInt(f[1], 10, 64)
			return kib << 10
		}
	}
	return 0
}
