package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Invariant 9: edge_roles gives each edge path a role; unset, every edge set
// is trained on; bad roles name the key.
func TestEdgeRoles(t *testing.T) {
	three := strings.Replace(minimal, `edge_paths = ["edges"]`, `edge_paths = ["kg/train", "kg/valid", "kg/test"]`, 1)
	c, err := Parse([]byte(three), "toml")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.TrainingEdgeSets(); !reflect.DeepEqual(got, []int{0, 1, 2}) {
		t.Errorf("unset edge_roles: training sets %v, want all", got)
	}
	if strings.Contains(string(c.Canonical()), "edge_roles") {
		t.Errorf("an unset edge_roles is in the canonical encoding (older fingerprints would change): %s", c.Canonical())
	}
	c, err = Parse([]byte(`edge_roles = ["train", "valid", "test"]`+"\n"+three), "toml")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.TrainingEdgeSets(); !reflect.DeepEqual(got, []int{0}) {
		t.Errorf("training sets %v, want [0]", got)
	}
	for name, want := range map[string]int{"test": 2, "valid": 1, "kg/train": 0, "train": 0} {
		if s, err := c.FindEdgeSet(name); err != nil || s.Index != want {
			t.Errorf("FindEdgeSet(%q) = %v, %v; want edge_paths[%d]", name, s, err, want)
		}
	}
	if _, err := c.FindEdgeSet("dev"); err == nil || !strings.Contains(err.Error(), `no edge set is called "dev"; the config's edge sets: train (edge_paths[0]), valid (edge_paths[1]), test (edge_paths[2])`) {
		t.Errorf("unknown edge set: %v", err)
	}

	for _, tc := range []struct{ roles, key, msg string }{
		{`["train", "test"]`, "edge_roles", "has 2 roles for 3 edge_paths"},
		{`["train", "dev", "test"]`, "edge_roles[1]", `"dev" is not one of train, valid, test`},
		{`["test", "valid", "test"]`, "edge_roles", "no edge set has the role train"},
		{`"train"`, "edge_roles", "want a list of strings"},
	} {
		_, err := Parse([]byte("edge_roles = "+tc.roles+"\n"+three), "toml")
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != tc.key || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("edge_roles = %s: %v, want key %s and %q", tc.roles, err, tc.key, tc.msg)
		}
	}
	// A PBG JSON dump has no edge_roles; null means unset too.
	if c, err := Parse([]byte(`{"entities": {"n": {"num_partitions": 1}}, "relations": [{"name": "r", "lhs": "n", "rhs": "n"}],
		"entity_path": "e", "edge_paths": ["a", "b"], "edge_roles": null}`), "json"); err != nil || len(c.TrainingEdgeSets()) != 2 {
		t.Errorf("edge_roles null: %v", err)
	}
}
