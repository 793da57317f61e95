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
	got := exportedConfig(t, `entity_path = "e"
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
`)
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

// Keys that some PBG releases do not know (early_stopping, and the sharded
// partition server's two) are left out of config.json at their defaults,
// so that those releases load it (a release whose schema lacks them
// refused the file: "Unknown key: early_stopping"); set to something else,
// they are written.
func TestConfigJSONLeavesOutLaterKeysAtDefaults(t *testing.T) {
	base := "entity_path = \"e\"\nedge_paths = [\"p\"]\n[entities.n]\nnum_partitions = 1\n[[relations]]\nname = \"r\"\nlhs = \"n\"\nrhs = \"n\"\n"
	keys := func(extra string) map[string]any { return exportedConfig(t, extra+base) }
	got := keys("")
	for k := range laterKeys {
		if _, ok := got[k]; ok {
			t.Errorf("config.json has %s at its default", k)
		}
	}
	if got["bias"] != false || got["dimension"] == nil {
		t.Errorf("other keys at their defaults stay: bias %v, dimension %v", got["bias"], got["dimension"])
	}
	got = keys("early_stopping = true\npartition_shard_size = 100\nnum_groups_per_sharded_partition_server = 2\n")
	if got["early_stopping"] != true || got["partition_shard_size"] != 100.0 || got["num_groups_per_sharded_partition_server"] != 2.0 {
		t.Errorf("set keys: early_stopping %v, partition_shard_size %v, groups %v", got["early_stopping"], got["partition_shard_size"], got["num_groups_per_sharded_partition_server"])
	}
}

// exportedConfig is the config.json configJSON writes for the TOML config
// text, as a map.
func exportedConfig(t *testing.T, text string) map[string]any {
	t.Helper()
	cfg, err := config.Parse([]byte(text), "toml")
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
	return got
}
