package importer_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/importer"
)

// Import a small TSV edge list (lhs, relation, rhs) into an edge store:
// the config names the entity types, their partitions and the relations,
// and where the store goes; the Report accounts for every line, here a
// comment and a line whose relation the config does not know (skipped and
// reported, within Options.MaxErrors).
func Example() {
	dir, err := os.MkdirTemp("", "importer-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	tsv := filepath.Join(dir, "edges.tsv")
	lines := "# user\trelation\titem\n" +
		"ann\tbuys\tbook\n" +
		"ann\tbuys\tlamp\n" +
		"bob\tbuys\tbook\n" +
		"cid\tbuys\tdesk\n" +
		"cid\tsells\tlamp\n"
	if err := os.WriteFile(tsv, []byte(lines), 0o644); err != nil {
		fmt.Println(err)
		return
	}
	cfg, err := config.Parse([]byte(fmt.Sprintf(`
entity_path = %q
edge_paths = [%q]
checkpoint_path = %q
[entities.user]
num_partitions = 2
[entities.item]
num_partitions = 1
[[relations]]
name = "buys"
lhs = "user"
rhs = "item"
`, filepath.Join(dir, "entities"), filepath.Join(dir, "edges"), filepath.Join(dir, "model"))), "toml")
	if err != nil {
		fmt.Println(err)
		return
	}
	opts := importer.DefaultOptions()
	opts.RelCol = 1 // columns: lhs 0, relation 1, rhs 2
	opts.MaxErrors = 1
	rep, err := importer.Import(context.Background(), cfg, opts, []string{tsv})
	if err != nil {
		fmt.Println(err)
		return
	}
	set := rep.EdgeSets[0]
	fmt.Printf("lines %d: %d comment, %d edges, %d skipped\n", set.Lines, set.CommentLines, set.Edges, set.Skipped)
	fmt.Printf("entities: user %d, item %d\n", rep.Entities["user"], rep.Entities["item"])
	fmt.Printf("buckets %d (%dx%d), largest %d edges\n", rep.Buckets, rep.Partitions[0], rep.Partitions[1], set.LargestBucket)
	for _, bad := range rep.BadLines {
		fmt.Printf("skipped line %d, column %d: %s\n", bad.Line, bad.Column, bad.Reason)
	}
	// Output:
	// lines 6: 1 comment, 4 edges, 1 skipped
	// entities: user 3, item 3
	// buckets 2 (2x1), largest 2 edges
	// skipped line 6, column 5: unknown relation
}
