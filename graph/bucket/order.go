package bucket

import (
	"fmt"
	"math/rand/v2"

	"github.com/batchprep/batchprep/graph"
)

// Order names, as in PBG's bucket_order key.
const (
	Random    = "random"
	Affinity  = "affinity"
	OutsideIn = "outside_in"
	InsideOut = "inside_out"
)

// Names lists the orders in a fixed order.
var Names = []string{Random, Affinity, InsideOut, OutsideIn, Buffer}

// DefaultBuffer is the buffer size c of Make: two partitions, PBG's.
const DefaultBuffer = 2

// ErrUnknownOrder is returned (wrapped) for an order name not in Names.
var ErrUnknownOrder = fmt.Errorf("bucket: unknown bucket order")

// Make returns the order called name over an l x r grid, drawing from
// rng, for a buffer of DefaultBuffer partitions.
func Make(name string, l, r int, rng *rand.Rand) ([]graph.Bucket, error) {
	return MakeBuffered(name, l, r, DefaultBuffer, rng)
}

// MakeBuffered returns the order called name over an l x r grid, drawing
// from rng, for a buffer of c >= 2 partitions (only the buffer order
// depends on c).
func MakeBuffered(name string, l, r, c int, rng *rand.Rand) ([]graph.Bucket, error) {
	if l < 1 || r < 1 {
		return nil, fmt.Errorf("bucket: shape %dx%d: both sides need at least one partition", l, r)
	}
	if c < 2 {
		return nil, fmt.Errorf("bucket: partition_buffer = %d: must be >= 2", c)
	}
	switch name {
	case Buffer:
		return BufferOrder(l, r, c, rng), nil
	case Random:
		return RandomOrder(l, r, rng), nil
	case Affinity:
		return AffinityOrder(l, r, rng), nil
	case OutsideIn:
		return OutsideInOrder(l, r, rng), nil
	case InsideOut:
		return InsideOutOrder(l, r, rng), nil
	}
	return nil, fmt.Errorf("%w %q (want random, affinity, inside_out, outside_in or buffer)", ErrUnknownOrder, name)
}

// Lexicographic returns (0,0), (0,1), ..., (l-1,r-1).
func Lexicographic(l, r int) []graph.Bucket {
	out := make([]graph.Bucket, 0, l*r)
	for i := 0; i < l; i++ {
		for j := 0; j < r; j++ {
			out = append(out, graph.Bucket{Lhs: i, Rhs: j})
		}
	}
	return out
}

// RandomOrder returns all buckets uniformly shuffled (Fisher-Yates on the
// lexicographic list).
func RandomOrder(l, r int, rng *rand.Rand) []graph.Bucket {
	out := Lexicographic(l, r)
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// Shares reports whether a and b have a partition in common (see the
// package comment: lhs and rhs indices are one index space).
func Shares(a, b graph.Bucket) bool {
	return a.Lhs == b.Lhs || a.Rhs == b.Rhs || a.Lhs == b.Rhs || a.Rhs == b.Lhs
}
