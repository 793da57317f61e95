package train_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/importer"
	"github.com/batchprep/batchprep/graph/train"
)

// Train embeddings of a small graph in-process: import its edges, open the
// edge store, then New and Run train it and commit a checkpoint into
// checkpoint_path. The ring's 16 nodes are in 2 partitions, so an epoch
// trains 4 buckets (lhs partition, rhs partition) in the plan's order;
// eval_fraction holds a quarter of each bucket's edges out (rounded down).
// With one worker a run is a deterministic function of the config and the
// edges; the counts printed are the same on every machine (the losses,
// floating-point sums, are not printed).
func Example() {
	dir, err := os.MkdirTemp("", "train-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	var edges strings.Builder
	for i := range 16 { // a ring: e0 -> e1 -> ... -> e15 -> e0
		fmt.Fprintf(&edges, "e%d\te%d\n", i, (i+1)%16)
	}
	tsv := filepath.Join(dir, "ring.tsv")
	if err := os.WriteFile(tsv, []byte(edges.String()), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := config.Parse([]byte(fmt.Sprintf(`
entity_path = %q
edge_paths = [%q]
checkpoint_path = %q
dimension = 8
num_epochs = 2
workers = 1
batch_size = 4
num_batch_negs = 4
num_uniform_negs = 4
eval_fraction = 0.25
[entities.node]
num_partitions = 2
[[relations]]
name = "next"
lhs = "node"
rhs = "node"
`, filepath.Join(dir, "entities"), filepath.Join(dir, "edges"), filepath.Join(dir, "model"))), "toml")
	if err != nil {
		fmt.Println(err)
		return
	}
	opts := importer.DefaultOptions()
	opts.RhsCol = 1 // two columns: lhs, rhs
	if _, err := importer.Import(context.Background(), cfg, opts, []string{tsv}); err != nil {
		fmt.Println(err)
		return
	}
	store, err := edgestore.Open(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	tr, err := train.New(cfg, store, train.Options{Bucket: func(ev train.Event) {
		fmt.Printf("epoch %d bucket (%d,%d): %d edges trained, %d held out\n",
			ev.Epoch, ev.Bucket.Lhs, ev.Bucket.Rhs, ev.Edges, ev.Holdout)
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := tr.Run(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	man := tr.Manifest()
	fmt.Printf("done %v: %d epochs, %d buckets, %d edges\n", man.Done, len(man.History), man.Buckets, man.Edges)
	for _, t := range man.Tables {
		fmt.Printf("%s: %d rows\n", t.File, t.Rows)
	}
	fmt.Println(man.Model.File)
	// Output:
	// epoch 0 bucket (1,1): 3 edges trained, 0 held out
	// epoch 0 bucket (0,1): 4 edges trained, 1 held out
	// epoch 0 bucket (1,0): 4 edges trained, 1 held out
	// epoch 0 bucket (0,0): 3 edges trained, 0 held out
	// epoch 1 bucket (1,1): 3 edges trained, 0 held out
	// epoch 1 bucket (0,0): 3 edges trained, 0 held out
	// epoch 1 bucket (0,1): 4 edges trained, 1 held out
	// epoch 1 bucket (1,0): 4 edges trained, 1 held out
	// done true: 2 epochs, 8 buckets, 28 edges
	// emb_0_0.v4.bin: 8 rows
	// emb_0_1.v4.bin: 8 rows
	// model.v4.bin
}
