package train

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"weak"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/importer"
	"github.com/batchprep/batchprep/graph/train/model"
)

// A partition swapped out is freed before the next one is loaded, even
// after a worker updated it: the bucket's partitions are all the trainer
// holds (docs/training.md, "Memory").
func TestSwapInFreesDroppedPartitions(t *testing.T) {
	tr := ringTrainer(t, 200, 2, "")
	if err := tr.swapIn(graph.Bucket{Lhs: 0, Rhs: 0}); err != nil {
		t.Fatal(err)
	}
	tab := tr.tables[tableKey{0, 0}]
	b := model.Batch{Lhs: []uint32{0, 1}, Rhs: []uint32{1, 0}, Rel: []uint32{0, 0}}
	tr.workers[0].Step(b, tab, tab, rand.New(rand.NewPCG(1, 2)))
	gone := weak.Make(tab)
	tab = nil
	if err := tr.swapIn(graph.Bucket{Lhs: 1, Rhs: 1}); err != nil {
		t.Fatal(err)
	}
	if gone.Value() != nil {
		t.Error("partition 0 is still in memory after bucket (1,1) was swapped in")
	}
}

// ringTrainer imports a ring of n entities in parts partitions and returns
// a trainer of it with the extra config lines (before the tables).
func ringTrainer(t *testing.T, n, parts int, extra string) *Trainer {
	var edges strings.Builder
	for i := range n {
		fmt.Fprintf(&edges, "e%d\tr\te%d\n", i, (i+7)%n)
	}
	return edgeTrainer(t, edges.String(), parts, extra)
}

// edgeTrainer imports edges (lhs, relation r, rhs; one entity type) in
// parts partitions and returns a trainer of them with the extra config
// lines (before the tables).
func edgeTrainer(t *testing.T, edges string, parts int, extra string) *Trainer {
	dir := t.TempDir()
	tsv := filepath.Join(dir, "edges.tsv")
	if err := os.WriteFile(tsv, []byte(edges), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(fmt.Sprintf(`entity_path = %q
edge_paths = [%q]
checkpoint_path = %q
dimension = 8
workers = 1
%s
[entities.node]
num_partitions = %d
[[relations]]
name = "r"
lhs = "node"
rhs = "node"
`, filepath.Join(dir, "ent"), filepath.Join(dir, "edges"), filepath.Join(dir, "ckpt"), extra, parts)), "toml")
	if err != nil {
		t.Fatal(err)
	}
	opts := importer.DefaultOptions()
	opts.RelCol = 1
	if _, err := importer.Import(context.Background(), cfg, opts, []string{tsv}); err != nil {
		t.Fatal(err)
	}
	st, err := edgestore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	tr, err := New(cfg, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.releaseAll(); tr.Close() })
	return tr
}
