package train_test

import (
	"context"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/eval"
	"github.com/batchprep/batchprep/graph/train"
)

const tinySettings = `dimension = 16
num_epochs = 40
batch_size = 8
num_batch_negs = 8
num_uniform_negs = 8
comparator = "dot"
loss_fn = "softmax"
lr = 0.1
init_scale = 0.1
global_emb = false
eval_fraction = 0
workers = 2
`

// A tiny graph is learned to filtered MRR 1.0 with 1 partition. With 2
// partitions (both in the buffer of 2: never loaded) an entity is never a negative for
// edges whose true entity is in the other partition, as in PBG, so
// filtered ranking over all entities stays lower: at least 0.8 is asked.
func TestTinyGraphLearned(t *testing.T) {
	for _, parts := range []int{1, 2} {
		dir := t.TempDir()
		edges := ringEdges(10)
		cfg := fixture(t, dir, edges, tinySettings, parts)
		st := openStore(t, cfg)
		tr, err := train.New(cfg, st, train.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		ev, err := eval.Open(cfg, st)
		if err != nil {
			t.Fatal(err)
		}
		test, err := eval.ReadTriples("edges", strings.NewReader(edges), eval.DefaultColumns())
		if err != nil {
			t.Fatal(err)
		}
		rep := ev.Rank(test)
		if rep.Count != int64(2*len(test)) || rep.Unknown != 0 {
			t.Fatalf("%d partitions: ranked %d, unknown %d", parts, rep.Count, rep.Unknown)
		}
		if want := []float64{0, 1, 0.8}[parts]; rep.MRR < want {
			t.Errorf("%d partitions: MRR %.3f, want >= %v (%+v)", parts, rep.MRR, want, rep)
		}
		man := tr.Manifest()
		if !man.Done || man.Buckets != int64(40*parts*parts) {
			t.Errorf("%d partitions: done %v after %d buckets", parts, man.Done, man.Buckets)
		}
		if parts == 2 && man.IO.Loads != 0 {
			t.Errorf("%d partitions: %d loads; the buffer of 2 holds both", parts, man.IO.Loads)
		}
		t.Logf("%d partitions: %+v io %+v", parts, rep.Metrics, man.IO)
	}
}
