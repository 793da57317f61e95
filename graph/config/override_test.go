package config

import (
	"errors"
	"strings"
	"testing"
)

// Overrides set top-level and nested keys, parse JSON values, and name the
// key of a bad value.
func TestWithOverrides(t *testing.T) {
	c, err := Parse([]byte(`
entity_path = "e"
edge_paths = ["x"]
checkpoint_path = "c"
[entities.node]
num_partitions = 1
[[relations]]
name = "r"
lhs = "node"
rhs = "node"
`), "toml")
	if err != nil {
		t.Fatal(err)
	}
	o, err := WithOverrides(c, []string{"dimension=400", "lr=0.1", "relations.0.operator=complex_diagonal", "entities.node.num_partitions=4", "comparator=dot",
		"partition_buffer=4", "negatives=buffer", "bucket_order=buffer"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Dimension != 400 || o.Lr != 0.1 || o.Relations[0].Operator != "complex_diagonal" || o.Entities["node"].NumPartitions != 4 || o.Comparator != "dot" ||
		o.Buffer() != 4 || !o.BufferNegatives() || o.BucketOrder != "buffer" {
		t.Fatalf("overrides not applied: %+v", o)
	}
	if c.Dimension == 400 {
		t.Fatal("the original config changed")
	}
	// degree_exponent: unset is the default; set, it is kept.
	for set, want := range map[string]float64{"": DefaultDegreeExponent, "degree_exponent=1": 1, "degree_exponent=0.5": 0.5} {
		sets := []string{"negatives=buffer_degree"}
		if set != "" {
			sets = append(sets, set)
		}
		d, err := WithOverrides(c, sets)
		if err != nil {
			t.Fatal(err)
		}
		if !d.DegreeNegatives() || d.DegreePower() != want {
			t.Errorf("%q: degree power %v, want %v", set, d.DegreePower(), want)
		}
	}
	for _, bad := range []string{"batch_size=-3", "relations.5.operator=x", "nokey", "bucket_order=sideways", "partition_buffer=1"} {
		_, err := WithOverrides(c, []string{bad})
		if err == nil {
			t.Errorf("%s: no error", bad)
			continue
		}
		key, _, _ := strings.Cut(bad, "=")
		key, _, _ = strings.Cut(key, ".")
		if !strings.Contains(err.Error(), key) {
			t.Errorf("%s: error does not name the key: %v", bad, err)
		}
	}
	// Invariant 10: an override that names no key, or is not key=value, unwraps to
	// ErrBadOverride (a usage mistake); a bad value does not. No message
	// carries the json package's text.
	for bad, want := range map[string]bool{"nokey": true, "=1": true, "dimensions=8": true, "relations.5.operator=x": true,
		"entities.node.colour=1": true, "dimension.x=1": true, "batch_size=-3": false, "bucket_order=sideways": false, "dimension=abc": false} {
		_, err := WithOverrides(c, []string{bad})
		if got := errors.Is(err, ErrBadOverride); got != want {
			t.Errorf("%s: errors.Is(ErrBadOverride) = %v, want %v (%v)", bad, got, want, err)
		}
		if err != nil && strings.Contains(err.Error(), "json:") {
			t.Errorf("%s: library text in %q", bad, err)
		}
	}
}
