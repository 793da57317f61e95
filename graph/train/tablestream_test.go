package train_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/train"
)

// A partition is never held twice: loading it from the checkpoint and
// saving it again allocate about one copy of the table, not the file's
// bytes beside the floats (docs/training.md, "Memory").
func TestTableIOAllocatesOneCopy(t *testing.T) {
	dir := t.TempDir()
	cfg := fixture(t, dir, ringEdges(20000), "dimension = 100\nworkers = 1\nbatch_size = 100\nnum_batch_negs = 10\nnum_uniform_negs = 0\nnum_epochs = 1\neval_fraction = 0\n", 1)
	st := openStore(t, cfg)
	run := func(c *config.Config) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		tr, err := train.New(c, st, train.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	table := uint64(20000 * 101 * 4)
	first := run(cfg)
	// The second run loads the partition the first one saved, trains it
	// and saves it again.
	more := *cfg
	more.NumEpochs = 2
	second := run(&more)
	if first > table*3/2 || second > table*3/2 {
		t.Errorf("allocated %d MiB (first run) and %d MiB (second, loading the checkpoint) for a %d MiB table: want at most 1.5 copies",
			first>>20, second>>20, table>>20)
	}
}
