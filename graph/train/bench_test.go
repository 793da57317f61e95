package train_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/importer"
	"github.com/batchprep/batchprep/graph/train"
	"github.com/batchprep/batchprep/internal/shared"
)

// BenchmarkTrainFB15k237 trains one epoch of FB15k-237 (272,115 edges)
// per iteration with the PBG comparison settings
// (examples/fb15k237-complex.toml: complex_diagonal, dot, softmax, 50
// batch and 1000 uniform negatives on both sides, batch 1000, Adagrad lr
// 0.1, N3 1e-3, dynamic relations, eval_fraction 0, 1 partition) at
// dimension 100 and 400, with 2 workers (the comparison) and 1 (the
// baseline in the same run), checkpoint included. It reports edges/s.
// Run with -benchtime 1x: one iteration is tens of seconds.
func BenchmarkTrainFB15k237(b *testing.B) {
	data := shared.Need(b, "kg", "fb15k-237", "train.txt")
	ex, err := os.ReadFile(filepath.Join("..", "..", "examples", "fb15k237-complex.toml"))
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	base, err := config.Parse(ex, "toml")
	if err != nil {
		b.Fatal(err)
	}
	base.EntityPath, base.EdgePaths = filepath.Join(dir, "entities"), []string{filepath.Join(dir, "edges")}
	opts := importer.DefaultOptions()
	opts.RelCol = 1
	if _, err := importer.Import(context.Background(), base, opts, []string{data}); err != nil {
		b.Fatal(err)
	}
	for _, d := range []int{100, 400} {
		for _, workers := range []int{2, 1} {
			b.Run(fmt.Sprintf("dim=%d/workers=%d", d, workers), func(b *testing.B) {
				cfg, err := config.WithOverrides(base, []string{fmt.Sprintf("dimension=%d", d), fmt.Sprintf("workers=%d", workers), "num_epochs=1"})
				if err != nil {
					b.Fatal(err)
				}
				st := openStore(b, cfg)
				var edges int64
				b.ResetTimer()
				for i := range b.N {
					cfg.CheckpointPath = filepath.Join(dir, fmt.Sprintf("ckpt-%d-%d-%d", d, workers, i))
					tr, err := train.New(cfg, st, train.Options{})
					if err != nil {
						b.Fatal(err)
					}
					if err := tr.Run(context.Background()); err != nil {
						b.Fatal(err)
					}
					edges += tr.Manifest().Edges
				}
				b.ReportMetric(float64(edges)/b.Elapsed().Seconds(), "edges/s")
			})
		}
	}
}
