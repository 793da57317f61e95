package train

import (
	"math/bits"
	"slices"

	"github.com/batchprep/batchprep/graph/train/model"
)

// Residency balance (negatives = "buffer_degree"). A buffer draws a
// bucket's negatives from the partitions resident while it trains, so a
// partition that stays in the buffer for many buckets of a pass takes many
// more negatives than one that passes through: with c = 4 of 16, the
// buffer order's fixed partitions stay for whole rounds. At P = 1 every
// entity takes negatives at every step. Balancing gives each resident
// partition's draws a weight inversely proportional to the buckets of the
// pass it is resident for, so that over a pass each entity is drawn about
// as often as the same negatives would draw it at P = 1.

// residencyWeights returns each resident partition's weight among the
// buffer's negatives for the pass of pos: (most << 8) / n, n the buckets of
// the pass the partition is resident for and most the largest n. The
// counts come from a replay of the buffer from the plan's start (so they
// are the same after a resume), walked forward from pass to pass; the
// weights of the current pass are kept.
func (t *Trainer) residencyWeights(pos Position) map[tableKey]uint64 {
	start := Position{Epoch: pos.Epoch, EdgeSet: pos.EdgeSet, Chunk: pos.Chunk}
	bl := &t.balance
	if bl.weights != nil && bl.pass == start {
		return bl.weights
	}
	if bl.sim == nil || before(start, bl.at) {
		bl.sim, bl.at = newResidency(t.res.c), Position{}
	}
	l, r := t.plan.Shape()
	counts := map[tableKey]uint64{}
	p := bl.at
	for ; p.Epoch < t.cfg.NumEpochs; p = t.advance(p, l*r) {
		pass := Position{Epoch: p.Epoch, EdgeSet: p.EdgeSet, Chunk: p.Chunk}
		if pass != start && len(counts) > 0 {
			break
		}
		bl.sim.admit(t.needed(t.bucketAt(p)), func(k tableKey) int { return t.look.next(p, k) })
		if pass == start {
			for _, k := range bl.sim.keys() {
				counts[k]++
			}
		}
	}
	bl.at = p
	var most uint64
	for _, n := range counts {
		most = max(most, n)
	}
	w := map[tableKey]uint64{}
	for k, n := range counts {
		w[k] = (most << 8) / n
	}
	bl.pass, bl.weights = start, w
	return w
}

// balancePools weights each pool's tables by residencyWeights; a pool
// whose tables all weigh the same (every partition resident throughout, as
// at P = 1) is left as it is, and so is one whose weighted totals would
// overflow 64 bits (not met below about 2^30 rows a partition).
func (t *Trainer) balancePools(pools map[int]*model.Pool, pos Position) {
	if !t.cfg.DegreeNegatives() || len(pools) == 0 {
		return
	}
	w := t.residencyWeights(pos)
	byType := map[int][]uint64{}
	for _, k := range t.res.keys() {
		byType[k.typ] = append(byType[k.typ], max(w[k], 1))
	}
	for typ, p := range pools {
		ws := byType[typ]
		if len(ws) != len(p.Tabs) || slices.Min(ws) == slices.Max(ws) || !fitsWeighted(p, ws) {
			continue
		}
		pools[typ] = p.Weighted(ws)
	}
}

// fitsWeighted reports whether a pool's rows and degree weights, each
// table's times its weight, sum below 2^64.
func fitsWeighted(p *model.Pool, ws []uint64) bool {
	var rows, deg uint64
	for i, tab := range p.Tabs {
		for _, add := range [2]struct {
			sum *uint64
			n   uint64
		}{{&rows, uint64(tab.Rows)}, {&deg, degreeTotal(p, i)}} {
			hi, lo := bits.Mul64(add.n, ws[i])
			var carry uint64
			*add.sum, carry = bits.Add64(*add.sum, lo, 0)
			if hi != 0 || carry != 0 {
				return false
			}
		}
	}
	return true
}

func degreeTotal(p *model.Pool, i int) uint64 {
	if len(p.Deg) == 0 {
		return 0
	}
	return p.Deg[i].Total()
}
