package config

import (
	"strings"
	"testing"
)

// Training refuses a config whose relations would train against no
// negative (num_batch_negs and num_uniform_negs both 0, a relation without
// all_negs), naming both keys and the relation; one kind of negative, or
// all_negs on every relation that trains, is enough. Import and plan
// (Validate) accept it.
func TestTrainingNeedsNegatives(t *testing.T) {
	base := `entity_path = "e"
edge_paths = ["x"]
checkpoint_path = "c"
dimension = 4
batch_size = 10
eval_fraction = 0
%s
[entities.n]
num_partitions = 1
[[relations]]
name = "first"
lhs = "n"
rhs = "n"
%s
[[relations]]
name = "second"
lhs = "n"
rhs = "n"
%s
`
	for _, c := range []struct {
		name, top, r0, r1 string
		bad               string // the relation named, or "" when it trains
	}{
		{"no negatives", "num_batch_negs = 0\nnum_uniform_negs = 0", "", "", "first"},
		{"second without all_negs", "num_batch_negs = 0\nnum_uniform_negs = 0", "all_negs = true", "", "second"},
		{"every relation all_negs", "num_batch_negs = 0\nnum_uniform_negs = 0", "all_negs = true", "all_negs = true", ""},
		{"uniform only", "num_batch_negs = 0\nnum_uniform_negs = 5", "", "", ""},
		{"batch only", "num_batch_negs = 5\nnum_uniform_negs = 0", "", "", ""},
	} {
		doc := strings.Replace(strings.Replace(strings.Replace(base, "%s", c.top, 1), "%s", c.r0, 1), "%s", c.r1, 1)
		cfg, err := Parse([]byte(doc), "toml")
		if err != nil {
			t.Fatalf("%s: Validate refused it: %v", c.name, err)
		}
		err = cfg.ValidateTraining()
		if c.bad == "" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: trains against no negative without a word", c.name)
			continue
		}
		for _, want := range []string{"num_batch_negs", "num_uniform_negs", `"` + c.bad + `"`, "no negative"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not say %q", c.name, err, want)
			}
		}
	}
}
