package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// import --from pbg converts PBG's data directory written by h5py
// (graph/pbg/testdata/gen.py); train and export then work on it.
func TestImportFromPBG(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("..", "graph", "pbg", "testdata", "pbgdata")
	cfg := filepath.Join(dir, "c.toml")
	text := fmt.Sprintf(`entity_path = %q
edge_paths = [%q]
checkpoint_path = %q
dimension = 4
num_epochs = 1
batch_size = 2
num_batch_negs = 2
num_uniform_negs = 2
eval_fraction = 0
workers = 1

[entities.user]
num_partitions = 2

[entities.item]
num_partitions = 1

[[relations]]
name = "buys"
lhs = "user"
rhs = "item"

[[relations]]
name = "follows"
lhs = "user"
rhs = "user"
`, filepath.Join(dir, "ent"), filepath.Join(dir, "train"), filepath.Join(dir, "ckpt"))
	os.WriteFile(cfg, []byte(text), 0o644)
	code, _, errOut := run(t, "import", "--config", cfg, "--from", "pbg", src, filepath.Join(src, "train"))
	if code != 0 || !strings.Contains(errOut, "import: 14 edges in 1 edge sets from PBG's files, entities: item 4, user 5") ||
		!strings.Contains(errOut, "(3 of 4 bucket files present, weights true)") {
		t.Fatalf("import --from pbg: exit %d: %s", code, errOut)
	}
	if code, _, errOut := run(t, "train", "--quiet", "--config", cfg); code != 0 {
		t.Fatalf("train: %s", errOut)
	}
	code, out, errOut := run(t, "export", "--config", cfg)
	if code != 0 || !strings.Contains(out, "user\téva\t") || !strings.Contains(out, "item\tbox\t") {
		t.Fatalf("export: exit %d: %s %s", code, out, errOut)
	}
	// Usage errors.
	for _, a := range [][]string{{src}, {src, "a", "b"}} {
		code, _, errOut = run(t, append([]string{"import", "--config", cfg, "--from", "pbg"}, a...)...)
		if code != 2 || !strings.Contains(errOut, "PBG") {
			t.Fatalf("%v: exit %d: %s", a, code, errOut)
		}
	}
	code, _, errOut = run(t, "import", "--config", cfg, "--from", "parquet", "x")
	if code != 2 || !strings.Contains(errOut, `--from "parquet": want text or pbg`) {
		t.Fatalf("--from parquet: exit %d: %s", code, errOut)
	}
}
