package train_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/gen"
	"github.com/batchprep/batchprep/graph/importer"
	"github.com/batchprep/batchprep/graph/train"
)

// scaleSettings are the FB15k-237 comparison settings
// (examples/fb15k237-complex.toml) on one generated relation.
const scaleSettings = `dimension = 100
num_epochs = 1
batch_size = 1000
num_batch_negs = 50
num_uniform_negs = 1000
comparator = "dot"
loss_fn = "softmax"
lr = 0.1
regularization_coef = 1e-3
global_emb = false
eval_fraction = 0
workers = 2
bucket_order = "inside_out"
[entities.all]
num_partitions = %d
[[relations]]
name = "r0"
lhs = "all"
rhs = "all"
operator = "complex_diagonal"
`

// BenchmarkTrainScaleIO (issue 24, target 1's partitioned run): one epoch
// of graph/gen's power-law graph (scaleGraph; BATCHPREP_SCALE_ENTITIES entities, default 1,000,000, and
// BATCHPREP_SCALE_EDGES edges, default 10,000,000) with the FB15k-237
// settings at dimension 100, 2 workers, for P = 1 and 8 partitions, with
// the partition I/O behind training (io=overlap) and with it written in
// turn (io=sequential, the baseline in the same run). It reports edges/s
// (wall clock, the whole epoch with its checkpoints), iowait-% (the share
// of the epoch its buckets waited for partition loads and checkpoint
// writes, Trainer.IOWait), and the epoch's partition traffic in MiB
// (read-MiB, written-MiB, as plan --simulate predicts it). Large: runs
// only with BATCHPREP_SCALE=1 (bash .ci/bench scale), with -benchtime 1x;
// it needs about 2 GiB of memory and of disk at the defaults.
func BenchmarkTrainScaleIO(b *testing.B) {
	if os.Getenv("BATCHPREP_SCALE") != "1" {
		b.Skip("set BATCHPREP_SCALE=1 to run (a generated graph of 10 M edges)")
	}
	entities := envInt(b, "BATCHPREP_SCALE_ENTITIES", 1_000_000)
	edges := envInt(b, "BATCHPREP_SCALE_EDGES", 10_000_000)
	for _, parts := range []int{1, 8} {
		dir := b.TempDir()
		cfgText := fmt.Sprintf("entity_path = %q\nedge_paths = [%q]\ncheckpoint_path = %q\n", filepath.Join(dir, "entities"),
			filepath.Join(dir, "edges"), filepath.Join(dir, "ckpt")) + fmt.Sprintf(scaleSettings, parts)
		cfg, err := config.Parse([]byte(cfgText), "toml")
		if err != nil {
			b.Fatal(err)
		}
		if err := scaleGraph(b, cfg, dir, entities, edges); err != nil {
			b.Fatal(err)
		}
		st := openStore(b, cfg)
		for _, mode := range []string{"overlap", "sequential"} {
			b.Run(fmt.Sprintf("P=%d/io=%s", parts, mode), func(b *testing.B) {
				var wall, wait time.Duration
				var trained int64
				var io train.EpochIO
				for i := range b.N {
					cfg.CheckpointPath = filepath.Join(dir, fmt.Sprintf("ckpt-%s-%d", mode, i))
					tr, err := train.New(cfg, st, train.Options{SequentialIO: mode == "sequential"})
					if err != nil {
						b.Fatal(err)
					}
					start := time.Now()
					if err := tr.Run(context.Background()); err != nil {
						b.Fatal(err)
					}
					wall += time.Since(start)
					load, write := tr.IOWait()
					wait += load + write
					trained += tr.Manifest().Edges
					io = tr.EpochIO()[0]
					if err := os.RemoveAll(cfg.CheckpointPath); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(trained)/wall.Seconds(), "edges/s")
				b.ReportMetric(100*wait.Seconds()/wall.Seconds(), "iowait-%")
				b.ReportMetric(float64(io.LoadBytes)/(1<<20), "read-MiB")
				b.ReportMetric(float64(io.SaveBytes)/(1<<20), "written-MiB")
			})
		}
	}
}

// scaleGraph imports into cfg's store the scale benchmarks' graph:
// graph/gen's power-law graph (rank exponent BATCHPREP_SCALE_ZIPF/100,
// default 80, as bench/gengraph's; 0 gives uniform endpoints) of entities
// entities and edges edges, one relation r0, seed 1, written as TSV in dir.
func scaleGraph(b *testing.B, cfg *config.Config, dir string, entities, edges int) error {
	tsv := filepath.Join(dir, "edges.tsv")
	if err := writeScaleTSV(b, tsv, entities, edges); err != nil {
		return err
	}
	opts := importer.DefaultOptions()
	opts.RelCol = 1
	_, err := importer.Import(context.Background(), cfg, opts, []string{tsv})
	return err
}

// writeScaleTSV writes the scale benchmarks' graph (see scaleGraph) to path.
func writeScaleTSV(b *testing.B, path string, entities, edges int) error {
	zipf := 0.8
	if os.Getenv("BATCHPREP_SCALE_ZIPF") != "" {
		zipf = float64(scaleEnvZero(b, "BATCHPREP_SCALE_ZIPF")) / 100
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	err = gen.WriteTSV(f, gen.Params{Entities: entities, Edges: edges, Relations: 1, Zipf: zipf, Seed: 1})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// scaleEnvZero reads a non-negative integer from the environment.
func scaleEnvZero(b *testing.B, name string) int {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil || n < 0 {
		b.Fatalf("%s=%q: want an integer >= 0", name, os.Getenv(name))
	}
	return n
}
