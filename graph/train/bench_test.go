package train_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/importer"
	"github.com/batchprep/batchprep/graph/train"
	"github.com/batchprep/batchprep/internal/shared"
)

// BenchmarkTrainFB15k237 trains FB15k-237's 272,115 training edges with
// the PBG comparison settings, exactly as `batchprep train` does
// (examples/fb15k237-complex.toml: complex_diagonal, dot, softmax, 50
// batch and 1000 uniform negatives on both sides, batch 1000, Adagrad lr
// 0.1, N3 1e-3, dynamic relations, eval_fraction 0, 1 partition, every
// other key at its default), at dimension 100 and 400, with 2 workers
// (the comparison) and 1 (the baseline in the same run). One iteration is
// a run of BATCHPREP_TRAIN_EPOCHS epochs (default 3) from fresh
// embeddings; with one partition an epoch is one bucket, so each epoch is
// timed from one bucket callback to the next: partition setup, batch
// preparation, training and the checkpoint. It reports the median over
// all epochs of edges/s (wall clock) and of cpu-edges/s (edges per second
// of the process's CPU time: on a machine shared with other jobs, the
// figure the load moves least) and epoch-s, the median epoch's wall
// seconds. Run with -benchtime 1x.
func BenchmarkTrainFB15k237(b *testing.B) {
	data := shared.Need(b, "kg", "fb15k-237", "train.txt")
	ex, err := os.ReadFile(filepath.Join("..", "..", "examples", "fb15k237-complex.toml"))
	if err != nil {
		b.Fatal(err)
	}
	epochs := 3
	if s := os.Getenv("BATCHPREP_TRAIN_EPOCHS"); s != "" {
		if epochs, err = strconv.Atoi(s); err != nil || epochs < 1 {
			b.Fatalf("BATCHPREP_TRAIN_EPOCHS=%q: want a positive integer", s)
		}
	}
	dir := b.TempDir()
	base, err := config.Parse(ex, "toml")
	if err != nil {
		b.Fatal(err)
	}
	base.EntityPath, base.EdgePaths = filepath.Join(dir, "entities"), []string{filepath.Join(dir, "edges")}
	base.EdgeRoles = nil // the example names three edge paths; this imports train only
	opts := importer.DefaultOptions()
	opts.RelCol = 1
	if _, err := importer.Import(context.Background(), base, opts, []string{data}); err != nil {
		b.Fatal(err)
	}
	for _, d := range []int{100, 400} {
		for _, workers := range []int{2, 1} {
			b.Run(fmt.Sprintf("dim=%d/workers=%d", d, workers), func(b *testing.B) {
				cfg, err := config.WithOverrides(base, []string{fmt.Sprintf("dimension=%d", d),
					fmt.Sprintf("workers=%d", workers), fmt.Sprintf("num_epochs=%d", epochs)})
				if err != nil {
					b.Fatal(err)
				}
				st := openStore(b, cfg)
				var wall, cpu []float64 // per epoch: edges/s, edges per CPU second
				var secs []float64
				for i := range b.N {
					cfg.CheckpointPath = filepath.Join(dir, fmt.Sprintf("ckpt-%d-%d-%d", d, workers, i))
					last, lastCPU := time.Now(), cpuTime()
					tr, err := train.New(cfg, st, train.Options{Bucket: func(ev train.Event) {
						now, c := time.Now(), cpuTime()
						s := now.Sub(last).Seconds()
						secs = append(secs, s)
						wall = append(wall, float64(ev.Edges)/s)
						cpu = append(cpu, float64(ev.Edges)/(c-lastCPU).Seconds())
						last, lastCPU = now, c
					}})
					if err != nil {
						b.Fatal(err)
					}
					if err := tr.Run(context.Background()); err != nil {
						b.Fatal(err)
					}
					if err := os.RemoveAll(cfg.CheckpointPath); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(median(wall), "edges/s")
				b.ReportMetric(median(cpu), "cpu-edges/s")
				b.ReportMetric(median(secs), "epoch-s")
			})
		}
	}
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := slices.Clone(x)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// cpuTime is the process's user+system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
