package train

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/internal/alias"
)

// Degree negatives (negatives = "buffer_degree"). At P = 1 a chunk's batch
// negatives are the other positives' entities: draws weighted by degree
// from the whole graph. Under partitioning they come from the bucket's two
// partitions only. Degree negatives take their place: the same number per
// chunk, drawn from every resident partition of the side's entity type,
// each row with probability proportional to its entity's degree. An
// entity's degree is the number of training edges it is an endpoint of
// (either side, any relation; held-out edges are not counted), counted
// once per Run from the plan's first pass, so it is the same on every
// machine and after every resume.

// countDegrees counts every entity's degree into t.degree, one array per
// partition, preparing each bucket of each edge set and chunk as the
// plan's first pass does (its holdout is the same in every pass). It
// returns the number of training edges counted.
func (t *Trainer) countDegrees(ctx context.Context) (edges int64, err error) {
	deg := map[tableKey][]uint32{}
	counts := func(typ string, part int) ([]uint32, error) {
		k := tableKey{t.typeIdx[typ], part}
		if d, ok := deg[k]; ok {
			return d, nil
		}
		n, err := t.store.EntityCount(typ, part)
		if err != nil {
			return nil, err
		}
		deg[k] = make([]uint32, n)
		return deg[k], nil
	}
	l, r := t.plan.Shape()
	for set := range t.plan.NumEdgeSets() {
		for chunk := range t.plan.NumChunks() {
			for i := range l {
				for j := range r {
					pb, err := t.plan.PrepareBucket(ctx, 0, set, chunk, graph.Bucket{Lhs: i, Rhs: j})
					if err != nil {
						return 0, err
					}
					e, held := pb.Data(), pb.Holdout()
					for row := range e.Len() {
						if len(held) > 0 && held[0] == uint32(row) {
							held = held[1:]
							continue
						}
						rc := t.cfg.Relations[0]
						if !t.cfg.DynamicRelations {
							rc = t.cfg.Relations[e.Rel[row]]
						}
						for _, side := range [2]struct {
							typ        string
							coord, off int
						}{{rc.Lhs, i, int(e.Lhs[row])}, {rc.Rhs, j, int(e.Rhs[row])}} {
							d, err := counts(side.typ, partOf(t.cfg, side.typ, side.coord))
							if err != nil {
								return 0, err
							}
							if d[side.off] == math.MaxUint32 {
								return 0, fmt.Errorf("train: negatives = \"buffer_degree\": entity %d of partition %d of type %s has more than %d edges", side.off, side.coord, side.typ, uint32(math.MaxUint32))
							}
							d[side.off]++
						}
						edges++
					}
				}
			}
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(deg), func(a, b tableKey) int {
		return cmp.Or(cmp.Compare(a.typ, b.typ), cmp.Compare(a.part, b.part))
	}) {
		if err := checkDegreeTotal(deg[k], t.cfg.DegreePower()); err != nil {
			return 0, fmt.Errorf("train: negatives = \"buffer_degree\": partition %d of type %s: %w", k.part, t.types[k.typ], err)
		}
	}
	t.degree = deg
	return edges, nil
}

// degreeWeights returns the integer weights of degree negatives for the
// degrees d: d itself for the exponent 1, else d^e * 2^s rounded down
// (within one of it), the scale s keeping a degree of 1 at 128 or more
// and every weight below 2^32. Each power is a square root or a product
// of square roots of an exact value, which IEEE 754 rounds exactly, so the
// weights (and the alias tables built from them) are the same on every
// machine.
func degreeWeights(d []uint32, e float64) []uint32 {
	if e == 1 {
		return d
	}
	w := make([]uint32, len(d))
	for i, x := range d {
		f := float64(x)
		switch e {
		case 0.5:
			w[i] = uint32(math.Sqrt(f * (1 << 16))) // at most 2^24
		case 0.25:
			w[i] = uint32(math.Sqrt(math.Sqrt(f * (1 << 32)))) // at most 2^16
		case 0.75:
			w[i] = uint32(math.Sqrt(f) * math.Sqrt(math.Sqrt(f)) * (1 << 7)) // below 2^31
		default:
			panic(fmt.Sprintf("train: degree exponent %v", e)) // config.Validate refuses it
		}
	}
	return w
}

// checkDegreeTotal reports an error when the alias table of a partition's
// degree weights would overflow: the sum of the weights times the rows must
// stay below 2^64 (alias.New).
func checkDegreeTotal(d []uint32, e float64) error {
	var total uint64
	for _, x := range degreeWeights(d, e) {
		var carry uint64
		total, carry = bits.Add64(total, uint64(x), 0)
		if carry != 0 {
			return fmt.Errorf("the sum of its %d entities' degree weights exceeds 2^64", len(d))
		}
	}
	if hi, _ := bits.Mul64(total, uint64(len(d))); hi != 0 {
		return fmt.Errorf("its %d entities' degree weights (sum %d) are too many to sample exactly: the sum times the entities must stay below 2^64", len(d), total)
	}
	return nil
}

// degreeSamplers returns the degree samplers of the resident tables keys,
// building those of newly resident ones and forgetting those of evicted
// ones, so that t.samplers holds the buffer's samplers only.
func (t *Trainer) degreeSamplers(keys []tableKey) map[tableKey]*alias.Table {
	if t.samplers == nil {
		t.samplers = map[tableKey]*alias.Table{}
	}
	keep := map[tableKey]bool{}
	for _, k := range keys {
		keep[k] = true
		if t.samplers[k] == nil {
			d := t.degree[k]
			if d == nil { // a partition no training edge touches
				d = make([]uint32, t.tables[k].Rows)
			}
			t.samplers[k] = alias.New(degreeWeights(d, t.cfg.DegreePower()))
		}
	}
	for k := range t.samplers {
		if !keep[k] {
			delete(t.samplers, k)
		}
	}
	return t.samplers
}
