package export_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/eval"
	"github.com/batchprep/batchprep/graph/export"
	"github.com/batchprep/batchprep/graph/importer"
	"github.com/batchprep/batchprep/graph/train"
)

// Export a trained model as TSV: FromCheckpoint gathers every entity's
// embedding with its name and every relation's parameters from the
// checkpoint an Evaluator holds, and WriteTSV writes them one per line.
// The lines of the file are printed here without their values (floats
// that depend on rounding), only how many: the dimension for an entity,
// the operator's parameters for a relation.
func Example() {
	dir, err := os.MkdirTemp("", "export-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	cfg, store, err := trainShop(dir, "ann\tbook\nann\tlamp\nbob\tbook\n")
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
	relNames, err := store.RelationNames()
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := export.FromCheckpoint(cfg, ev, relNames)
	if err != nil {
		fmt.Println(err)
		return
	}
	path := filepath.Join(dir, "model.tsv")
	out, err := os.Create(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	err = export.WriteTSV(out, m)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		fields := strings.Split(line, "\t")
		head := 2 // type, name; or @comparator, name
		if fields[0] == "@relation" {
			head = 6 // @relation, name, lhs type, rhs type, side, operator
		}
		fmt.Printf("%s (%d values)\n", strings.Join(fields[:head], " "), len(fields)-head)
	}
	// Output:
	// item book (3 values)
	// item lamp (3 values)
	// user bob (3 values)
	// user ann (3 values)
	// @comparator cos (0 values)
	// @relation buys user item rhs translation (3 values)
}

// trainShop imports edges (user, item) into a store in dir and trains them
// for one epoch; it returns the config and the open store.
func trainShop(dir, edges string) (*config.Config, *edgestore.Store, error) {
	tsv := filepath.Join(dir, "buys.tsv")
	if err := os.WriteFile(tsv, []byte(edges), 0o644); err != nil {
		return nil, nil, err
	}
	cfg, err := config.Parse([]byte(fmt.Sprintf(`
entity_path = %q
edge_paths = [%q]
checkpoint_path = %q
dimension = 3
num_epochs = 1
workers = 1
batch_size = 2
num_batch_negs = 2
num_uniform_negs = 2
[entities.user]
num_partitions = 1
[entities.item]
num_partitions = 1
[[relations]]
name = "buys"
lhs = "user"
rhs = "item"
operator = "translation"
`, filepath.Join(dir, "entities"), filepath.Join(dir, "edges"), filepath.Join(dir, "model"))), "toml")
	if err != nil {
		return nil, nil, err
	}
	opts := importer.DefaultOptions()
	opts.RhsCol = 1
	if _, err := importer.Import(context.Background(), cfg, opts, []string{tsv}); err != nil {
		return nil, nil, err
	}
	store, err := edgestore.Open(cfg)
	if err != nil {
		return nil, nil, err
	}
	tr, err := train.New(cfg, store, train.Options{})
	if err == nil {
		err = tr.Run(context.Background())
	}
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	return cfg, store, nil
}
