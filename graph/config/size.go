package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits are the units ParseSize accepts, binary and decimal.
var sizeUnits = []struct {
	name string
	mult float64
}{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"kB", 1e3}, {"B", 1},
}

// ParseSize reads a size in bytes: a number followed by a unit (B, KiB,
// MiB, GiB, TiB, or the decimal KB, MB, GB, TB), with or without a space
// ("2GiB", "1.5 GB"), or a whole number of bytes. It must be positive.
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.name) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.name)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a size (a number and a unit, e.g. 2GiB or 512MiB)", s)
	}
	b := v * mult
	if b < 1 || b >= 1<<63 {
		return 0, fmt.Errorf("%q is out of range (from 1 byte to 8 EiB)", s)
	}
	return uint64(b), nil
}

// MemoryLimitBytes is memory_limit in bytes, 0 when unset (Validate has
// checked that it parses).
func (c *Config) MemoryLimitBytes() uint64 {
	if c.MemoryLimit == "" {
		return 0
	}
	n, _ := ParseSize(c.MemoryLimit)
	return n
}

// CheckpointEvery is the number of buckets a single-process run trains
// between checkpoint commits: checkpoint_buckets when set, otherwise the
// largest num_partitions of any entity type (at least 1) times c/2 for a
// partition buffer of c (Buffer): a commit writes every changed resident
// partition, so a larger buffer commits less often.
func (c *Config) CheckpointEvery() int {
	if c.CheckpointBuckets > 0 {
		return c.CheckpointBuckets
	}
	k := 1
	for _, e := range c.Entities {
		k = max(k, e.NumPartitions)
	}
	return k * max(c.Buffer()/2, 1)
}

// DegreeExponents are the values degree_exponent takes: powers of a
// degree that sqrt and products compute exactly rounded, so that a weight
// is the same on every machine.
var DegreeExponents = []float64{0.25, 0.5, 0.75, 1}

// DefaultDegreeExponent is degree_exponent when unset.
const DefaultDegreeExponent = 0.25

// DefaultPartitionBuffer is partition_buffer when unset and no memory
// budget chooses it: PBG's two partitions per entity type.
const DefaultPartitionBuffer = 2

// Buffer is c, the partitions of each entity type held at once:
// partition_buffer when set, else DefaultPartitionBuffer.
func (c *Config) Buffer() int {
	if c.PartitionBuffer >= 2 {
		return c.PartitionBuffer
	}
	return DefaultPartitionBuffer
}

// BufferNegatives reports whether uniform negatives are drawn from every
// resident partition (negatives = "buffer" or "buffer_degree").
func (c *Config) BufferNegatives() bool {
	return c.Negatives == "buffer" || c.Negatives == "buffer_degree"
}

// DegreeNegatives reports whether the batch negatives are replaced by
// draws weighted by degree from every resident partition (negatives =
// "buffer_degree").
func (c *Config) DegreeNegatives() bool { return c.Negatives == "buffer_degree" }

// DegreePower is the power of an entity's degree that its degree
// negatives' weight follows: degree_exponent, or DefaultDegreeExponent
// when it is unset.
func (c *Config) DegreePower() float64 {
	if c.DegreeExponent != 0 {
		return c.DegreeExponent
	}
	return DefaultDegreeExponent
}
