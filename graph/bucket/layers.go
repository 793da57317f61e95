package bucket

import (
	"math/rand/v2"
	"slices"

	"github.com/batchprep/batchprep/graph"
)

// layer returns layer i of an l x r grid: the buckets with min(lhs, rhs) == i
// as groups of a bucket and its transpose (the diagonal bucket alone), each
// group in random order and the groups in random order. The draws are: one
// Shuffle per two-bucket group, in increasing partner index, then one Shuffle
// of the groups.
func layer(i, l, r int, rng *rand.Rand) []graph.Bucket {
	type group struct {
		b [2]graph.Bucket
		n int
	}
	groups := []group{{b: [2]graph.Bucket{{Lhs: i, Rhs: i}}, n: 1}}
	for j := i + 1; j < max(l, r); j++ {
		var g group
		if j < l {
			g.b[g.n] = graph.Bucket{Lhs: j, Rhs: i}
			g.n++
		}
		if j < r {
			g.b[g.n] = graph.Bucket{Lhs: i, Rhs: j}
			g.n++
		}
		if g.n == 2 && rng.IntN(2) == 1 {
			g.b[0], g.b[1] = g.b[1], g.b[0]
		}
		groups = append(groups, g)
	}
	rng.Shuffle(len(groups), func(a, b int) { groups[a], groups[b] = groups[b], groups[a] })
	out := make([]graph.Bucket, 0, 2*len(groups))
	for _, g := range groups {
		out = append(out, g.b[:g.n]...)
	}
	return out
}

// layers returns layers 0 .. min(l, r)-1, drawn in that order.
func layers(l, r int, rng *rand.Rand) [][]graph.Bucket {
	out := make([][]graph.Bucket, min(l, r))
	for i := range out {
		out[i] = layer(i, l, r, rng)
	}
	return out
}

// OutsideInOrder returns layer 0 (the buckets touching partition 0) first,
// then layer 1, and so on.
func OutsideInOrder(l, r int, rng *rand.Rand) []graph.Bucket {
	return slices.Concat(layers(l, r, rng)...)
}

// InsideOutOrder returns the layers of OutsideInOrder, drawn the same way,
// last layer first.
func InsideOutOrder(l, r int, rng *rand.Rand) []graph.Bucket {
	ls := layers(l, r, rng)
	slices.Reverse(ls)
	return slices.Concat(ls...)
}
