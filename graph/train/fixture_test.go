package train_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
	"github.com/batchprep/batchprep/graph/importer"
)

// ringEdges is a tiny graph: n entities on a ring, relation "next" from
// each to its successor and "prev" back.
func ringEdges(n int) string {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "e%d\tnext\te%d\n", i, (i+1)%n)
		fmt.Fprintf(&sb, "e%d\tprev\te%d\n", (i+1)%n, i)
	}
	return sb.String()
}

// fixture writes edges and a config (absolute paths; extra TOML lines
// before the tables) into dir, imports the edges and returns the loaded
// config.
func fixture(t testing.TB, dir, edges, extra string, partitions int) *config.Config {
	t.Helper()
	tsv := filepath.Join(dir, "edges.tsv")
	if err := os.WriteFile(tsv, []byte(edges), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "config.toml")
	text := fmt.Sprintf(`entity_path = %q
edge_paths = [%q]
checkpoint_path = %q
%s
[entities.node]
num_partitions = %d

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
`, filepath.Join(dir, "entities"), filepath.Join(dir, "edges"), filepath.Join(dir, "ckpt"), extra, partitions)
	if err := os.WriteFile(cfgPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	opts := importer.DefaultOptions()
	opts.RelCol = 1
	if _, err := importer.Import(context.Background(), cfg, opts, []string{tsv}); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func openStore(t testing.TB, cfg *config.Config) *edgestore.Store {
	t.Helper()
	s, err := edgestore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
