package config

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for s, want := range map[string]uint64{"2GiB": 2 << 30, "512 MiB": 512 << 20, "1.5GB": 1_500_000_000,
		"4096": 4096, "1TiB": 1 << 40, "64KiB": 64 << 10, " 3 B ": 3, "10MB": 10_000_000} {
		got, err := ParseSize(s)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "GiB", "2 GiBs", "-1GiB", "0", "two", "NaN", "1e30"} {
		if n, err := ParseSize(s); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", s, n)
		}
	}
}

// memory_limit is checked by Validate, naming the key; unset, it is left
// out of the canonical encoding (fingerprints of older configs unchanged).
func TestMemoryLimitKey(t *testing.T) {
	base := `entity_path = "e"
edge_paths = ["p"]
[entities.n]
num_partitions = 1
[[relations]]
name = "r"
lhs = "n"
rhs = "n"
`
	c, err := Parse([]byte("memory_limit = \"2GiB\"\n"+base), "toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.MemoryLimitBytes() != 2<<30 || !strings.Contains(string(c.Canonical()), `"memory_limit":"2GiB"`) {
		t.Errorf("memory_limit: %d bytes, canonical %s", c.MemoryLimitBytes(), c.Canonical())
	}
	c, err = Parse([]byte(base), "toml")
	if err != nil || c.MemoryLimitBytes() != 0 || strings.Contains(string(c.Canonical()), "memory_limit") {
		t.Errorf("unset memory_limit: %v, canonical %s", err, c.Canonical())
	}
	_, err = Parse([]byte("memory_limit = \"lots\"\n"+base), "toml")
	if err == nil || !strings.Contains(err.Error(), "memory_limit") || !strings.Contains(err.Error(), `"lots" is not a size`) {
		t.Errorf("bad memory_limit: %v", err)
	}
}

// checkpoint_buckets: unset, the largest num_partitions; set, itself; a
// negative value is refused naming the key; unset, it stays out of the
// canonical encoding (fingerprints of older configs unchanged).
func TestCheckpointBucketsKey(t *testing.T) {
	base := `entity_path = "e"
edge_paths = ["p"]
[entities.n]
num_partitions = 8
[entities.m]
num_partitions = 3
[[relations]]
name = "r"
lhs = "n"
rhs = "m"
`
	c, err := Parse([]byte(base), "toml")
	if err != nil || c.CheckpointEvery() != 8 || strings.Contains(string(c.Canonical()), "checkpoint_buckets") {
		t.Errorf("unset checkpoint_buckets: %v, every %d, canonical %s", err, c.CheckpointEvery(), c.Canonical())
	}
	// A buffer of c commits every largest num_partitions x c/2 buckets.
	for buf, want := range map[int]int{2: 8, 3: 8, 4: 16, 8: 32} {
		c, err = Parse([]byte(fmt.Sprintf("partition_buffer = %d\n", buf)+base), "toml")
		if err != nil || c.CheckpointEvery() != want {
			t.Errorf("partition_buffer = %d: %v, every %d, want %d", buf, err, c.CheckpointEvery(), want)
		}
	}
	c, err = Parse([]byte("checkpoint_buckets = 1\n"+base), "toml")
	if err != nil || c.CheckpointEvery() != 1 {
		t.Errorf("checkpoint_buckets = 1: %v, every %d", err, c.CheckpointEvery())
	}
	_, err = Parse([]byte("checkpoint_buckets = -2\n"+base), "toml")
	if err == nil || !strings.Contains(err.Error(), "checkpoint_buckets") || !strings.Contains(err.Error(), "got -2") {
		t.Errorf("checkpoint_buckets = -2: %v", err)
	}
	_, err = Parse([]byte("checkpoint_buckets = \"row\"\n"+base), "toml")
	if err == nil || !strings.Contains(err.Error(), "checkpoint_buckets") {
		t.Errorf("checkpoint_buckets = \"row\": %v", err)
	}
}
