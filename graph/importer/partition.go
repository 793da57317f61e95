package importer

import (
	"hash/fnv"
	"math/bits"
	"math/rand/v2"

	"github.com/batchprep/batchprep/internal/mix"
)

// domainPartition separates the entity shuffle's random streams from every
// other use of the config seed.
const domainPartition = 0x696d706f72742d70 // "import-p"

// typeCoord turns an entity type name into a mixing coordinate, so that a
// type's shuffle does not depend on which other types exist.
func typeCoord(typ string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(typ))
	return h.Sum64()
}

// boundedUint64 returns a uniform value in [0, n) (n > 0) from r's raw
// 64-bit outputs, without modulo bias (Lemire's multiply-and-reject). It
// is written out here, rather than taken from math/rand/v2, so that the
// partition of every entity is pinned by this file alone (invariant 5).
func boundedUint64(r *rand.Rand, n uint64) uint64 {
	hi, lo := bits.Mul64(r.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), n)
		}
	}
	return hi
}

// shuffledOrder returns a uniformly random permutation of [0, n) drawn
// from the stream of (seed, type): order[pos] is the id placed at
// position pos (Fisher-Yates from the end).
func shuffledOrder(seed uint64, typ string, n int) []uint32 {
	order := make([]uint32, n)
	for i := range order {
		order[i] = uint32(i)
	}
	r := mix.Rand(seed, domainPartition, typeCoord(typ))
	for i := n - 1; i > 0; i-- {
		j := boundedUint64(r, uint64(i)+1)
		order[i], order[j] = order[j], order[i]
	}
	return order
}

// partStart is the first position of partition p among n entities in P
// partitions: ceil(p*n/P), as PBG.
func partStart(p, n, parts int) int {
	return int((uint64(p)*uint64(n) + uint64(parts) - 1) / uint64(parts))
}

// partition shuffles d's entities and cuts the order into parts contiguous
// ranges: partition p holds positions [partStart(p), partStart(p+1)). It
// fills d.loc and returns the names of each partition by offset.
func (d *dict) partition(seed uint64, parts int) [][]string {
	n := len(d.names)
	order := shuffledOrder(seed, d.typ, n)
	d.loc = make([]uint64, n)
	adviseHuge(d.loc)
	out := make([][]string, parts)
	for p := 0; p < parts; p++ {
		lo, hi := partStart(p, n, parts), partStart(p+1, n, parts)
		names := make([]string, 0, hi-lo)
		for pos := lo; pos < hi; pos++ {
			id := order[pos]
			d.loc[id] = uint64(p)<<32 | uint64(pos-lo)
			names = append(names, d.names[id])
		}
		out[p] = names
	}
	return out
}
