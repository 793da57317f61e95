package eval_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/eval"
	"github.com/batchprep/batchprep/graph/importer"
	"github.com/batchprep/batchprep/graph/train"
)

// Rank held-out edges against a trained checkpoint: Open loads the
// checkpoint of the config's checkpoint_path, Rank ranks each test edge's
// rhs and lhs among all entities, filtering out the known true edges.
// The graph is a ring, "next" one way and "prev" the other; three "next"
// edges are held out of training, and a fourth test edge names an entity
// that no imported file holds. The model learns the ring with a wide
// margin (every held-out edge ranks first whatever the seed), so these
// figures do not depend on floating-point rounding.
func Example() {
	dir, err := os.MkdirTemp("", "eval-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	var trained, heldOut strings.Builder
	for i := range 10 {
		next := fmt.Sprintf("e%d\tnext\te%d\n", i, (i+1)%10)
		if i%4 == 0 {
			heldOut.WriteString(next)
		} else {
			trained.WriteString(next)
		}
		fmt.Fprintf(&trained, "e%d\tprev\te%d\n", (i+1)%10, i)
	}
	heldOut.WriteString("e3\tnext\tx1\n")
	cfg, err := trainRing(dir, trained.String())
	if err != nil {
		fmt.Println(err)
		return
	}

	store, err := edgestore.Open(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	ev, err := eval.Open(cfg, store)
	if err != nil {
		fmt.Println(err)
		return
	}
	test, err := eval.ReadTriples("held-out", strings.NewReader(heldOut.String()), eval.DefaultColumns())
	if err != nil {
		fmt.Println(err)
		return
	}
	known, err := eval.ReadTriples("trained", strings.NewReader(trained.String()), eval.DefaultColumns())
	if err != nil {
		fmt.Println(err)
		return
	}
	rep := ev.Rank(test, known)
	fmt.Printf("%d edges: %d ranked sides (%s), %d unknown %v\n", rep.Edges, rep.Count, rep.Sides, rep.Unknown, rep.UnknownNames)
	fmt.Printf("mrr %.2f, hits@1 %.2f, hits@10 %.2f, mean rank %.1f\n", rep.MRR, rep.Hits1, rep.Hits10, rep.MeanRank)
	// Output:
	// 4 edges: 6 ranked sides (both), 1 unknown [x1]
	// mrr 1.00, hits@1 1.00, hits@10 1.00, mean rank 1.0
}

// trainRing imports edges (lhs, relation, rhs) into a store in dir and
// trains them with one worker; it returns the config.
func trainRing(dir, edges string) (*config.Config, error) {
	tsv := filepath.Join(dir, "trained.tsv")
	if err := os.WriteFile(tsv, []byte(edges), 0o644); err != nil {
		return nil, err
	}
	cfg, err := config.Parse([]byte(fmt.Sprintf(`
entity_path = %q
edge_paths = [%q]
checkpoint_path = %q
dimension = 16
num_epochs = 30
workers = 1
batch_size = 8
num_batch_negs = 8
num_uniform_negs = 8
comparator = "dot"
loss_fn = "softmax"
lr = 0.1
init_scale = 0.1
global_emb = false
[entities.node]
num_partitions = 1
[[relations]]
name = "next"
lhs = "node"
rhs = "node"
operator = "complex_diagonal"
[[relations]]
name = "prev"
lhs = "node"
rhs = "node"
operator = "complex_diagonal"
`, filepath.Join(dir, "entities"), filepath.Join(dir, "edges"), filepath.Join(dir, "model"))), "toml")
	if err != nil {
		return nil, err
	}
	opts := importer.DefaultOptions()
	opts.RelCol = 1
	if _, err := importer.Import(context.Background(), cfg, opts, []string{tsv}); err != nil {
		return nil, err
	}
	store, err := edgestore.Open(cfg)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	tr, err := train.New(cfg, store, train.Options{})
	if err != nil {
		return nil, err
	}
	return cfg, tr.Run(context.Background())
}
