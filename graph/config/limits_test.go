package config

import (
	"strings"
	"testing"
)

// Invariant 8: each limit is an error naming key, value and limit; the
// value at the limit is accepted.
func TestLimits(t *testing.T) {
	base := "entity_path = \"e\"\nedge_paths = [\"x\"]\n"
	rel := "[[relations]]\nname = \"r\"\nlhs = \"n\"\nrhs = \"n\"\n"
	cases := []struct {
		doc, key, value, limit string
	}{
		{base + "[entities.n]\nnum_partitions = 1000000000\n" + rel, "entities.n.num_partitions", "1000000000", "65536"},
		{base + "[entities.n]\nnum_partitions = 70000\n" + rel, "entities.n.num_partitions", "70000", "65536"},
		{base + "[entities.n]\nnum_partitions = 1025\n" + rel, "entities", "1050625 buckets", "1048576"},
		{"num_edge_chunks = 99999999999999\n" + base + "[entities.n]\nnum_partitions = 1\n" + rel, "num_edge_chunks", "99999999999999", "1048576"},
		{"workers = 99999999999999\n" + base + "[entities.n]\nnum_partitions = 1\n" + rel, "workers", "99999999999999", "4096"},
		{"num_epochs = 99999999999999\n" + base + "[entities.n]\nnum_partitions = 1\n" + rel, "num_epochs", "99999999999999", "2147483648"},
		{"dimension = 100000000000\n" + base + "[entities.n]\nnum_partitions = 1\n" + rel, "dimension", "100000000000", "65536"},
		{base + "[entities.n]\nnum_partitions = 1\ndimension = 70000\n" + rel, "entities.n.dimension", "70000", "65536"},
		{"batch_size = 100000000000\n" + base + "[entities.n]\nnum_partitions = 1\n" + rel, "batch_size", "100000000000", "16777216"},
		{"num_batch_negs = 1000000\n" + base + "[entities.n]\nnum_partitions = 1\n" + rel, "num_batch_negs", "1000000", "65536"},
		{"num_uniform_negs = 100000000000\n" + base + "[entities.n]\nnum_partitions = 1\n" + rel, "num_uniform_negs", "100000000000", "65536"},
		{"eval_num_uniform_negs = 70000\n" + base + "[entities.n]\nnum_partitions = 1\n" + rel, "eval_num_uniform_negs", "70000", "65536"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.doc), "toml")
		ce, ok := err.(*Error)
		if !ok || ce.Key != c.key || !strings.Contains(err.Error(), c.value) || !strings.Contains(err.Error(), c.limit) {
			t.Errorf("%s: error %v, want key %s naming %s and the limit %s", c.key, err, c.key, c.value, c.limit)
		}
	}
	ok := "workers = 4096\nnum_edge_chunks = 1048576\ndimension = 65536\nbatch_size = 16777216\nnum_uniform_negs = 65536\n" + base + "[entities.n]\nnum_partitions = 1024\n" + rel
	if _, err := Parse([]byte(ok), "toml"); err != nil {
		t.Errorf("values at the limits refused: %v", err)
	}
}
