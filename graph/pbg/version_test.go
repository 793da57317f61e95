package pbg

import (
	"encoding/json"
	"os"
	"sort"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
)

// config.json holds PyTorch-BigGraph's keys only, whatever batchprep keys
// the config sets: every key it writes is one of PBG's ConfigSchema (the
// keys of graph/config's dump of a PBG config), so PBG loads it. Before,
// memory_limit and checkpoint_buckets, when set, were written and PBG refused the file.
func TestConfigJSONHasPBGKeysOnly(t *testing.T) {
	raw, err := os.ReadFile("../config/testdata/pbg_full.json")
	if err != nil {
		t.Fatal(err)
	}
	var pbgKeys map[string]any
	if err := json.Unmarshal(raw, &pbgKeys); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(`entity_path = "e"
edge_paths = ["p"]
edge_roles = ["train"]
seed = 4
memory_limit = "2GiB"
checkpoint_buckets = 3
[entities.n]
num_partitions = 2
[[relations]]
name = "r"
lhs = "n"
rhs = "n"
`), "toml")
	if err != nil {
		t.Fatal(err)
	}
	b, err := configJSON(cfg, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	var extra []string
	for k := range got {
		if _, ok := pbgKeys[k]; !ok {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	if len(extra) > 0 {
		t.Errorf("config.json has keys PBG does not know: %v", extra)
	}
}
