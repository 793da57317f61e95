package model

import (
	"math/bits"
	"math/rand/v2"

	"github.com/batchprep/batchprep/internal/kern"
)

// Early updates. A batch of 1000 edges with 1000 uniform negatives per
// chunk of 50 draws 40,000 negative rows; on a table of millions of rows
// nearly all of them occur once in the batch. The batch step (invariant 5)
// gives each such row one Adagrad step with its one gradient after the
// batch, by which time the batch's other rows have evicted it from the
// caches: it is read from memory twice. A row that occurs once in the
// batch is read by no later chunk, so its step can be taken as soon as its
// gradient is known, while the row is still in cache, with the same
// gradient, the same arithmetic and so the same bits. Rows that occur more
// than once, and every positive, still sum their gradients and take their
// step after the batch.
//
// To know which rows occur once before the first chunk, the batch's uniform
// negatives are drawn up front (drawNegatives), in the order the chunks
// would draw them, and counted per side (rowCensus). Drawing up front
// happens with early updates on or off, so the random draws are the same
// either way.

// manyBit marks a census key whose row occurs more than once, or as a
// positive.
const manyBit = 1 << 31

// EarlyMin is the smallest table (embedding bytes) whose rows are updated
// early. A smaller one stays in cache whole, so an update after the batch
// finds its rows there anyway, and a batch's 40,000 draws cover it several
// times, so few rows occur once: counting would cost more than it saves
// (FB15k-237's 5.8 MB table ran 8 % slower with it).
const EarlyMin = 32 << 20

// earlyMin is EarlyMin, a variable so that tests can update small tables
// early.
var earlyMin uint64 = EarlyMin

// rowCensus is a set of the rows of one side of a batch with, for each,
// whether it occurs once: open addressing over keys row+1 (0: empty),
// sized to a few hundred KiB so that it stays in cache.
type rowCensus struct {
	keys  []uint32
	shift uint
	on    bool // the side's rows are counted in this batch: its negatives are updated early
}

// earlyTable is whether a side on table t counts its rows and updates its
// negatives early.
func earlyTable(t *Table) bool {
	return uint64(t.Rows)*uint64(t.Dim)*4 >= earlyMin && t.Rows < manyBit-1
}

// reset empties the census and sizes it for up to n rows.
func (c *rowCensus) reset(n int) {
	lg := max(bits.Len(uint(2*n)), 10)
	if len(c.keys) != 1<<lg {
		c.keys = make([]uint32, 1<<lg)
	} else {
		clear(c.keys)
	}
	c.shift = uint(32 - lg)
}

func (c *rowCensus) home(row uint32) uint32 { return (row * 0x9e3779b1) >> c.shift }

// note counts one occurrence of row; a positive (many) counts as several.
func (c *rowCensus) note(row uint32, many bool) {
	key, mask := row+1, uint32(len(c.keys)-1)
	if many {
		key |= manyBit
	}
	for i := c.home(row); ; i = (i + 1) & mask {
		switch k := c.keys[i]; {
		case k == 0:
			c.keys[i] = key
			return
		case k&^manyBit == row+1:
			c.keys[i] = k | manyBit
			return
		}
	}
}

// once is whether row was noted exactly once, not as a positive.
func (c *rowCensus) once(row uint32) bool {
	mask := uint32(len(c.keys) - 1)
	for i := c.home(row); ; i = (i + 1) & mask {
		switch k := c.keys[i]; {
		case k == 0:
			return false
		case k&^manyBit == row+1:
			return k&manyBit == 0
		}
	}
}

// drawNegatives draws the ke drawn negatives per side of a batch of n
// positives in chunks of cs into w.drawn, as the chunks' directions would
// draw them in turn: per chunk, those of the rhs side (from R's rows) when
// rhs, then those of the lhs side (from L's rows) when lhs; of each
// side's ke, the first kd are degree draws (Settings.DegreeNegs).
func (w *Worker) drawNegatives(n, cs, kd, ke int, rhs, lhs bool, L, R *Table, rng *rand.Rand) {
	w.drawn, w.farDraws = w.drawn[:0], w.farDraws[:0]
	for c0 := 0; c0 < n; c0 += cs {
		if rhs {
			for i := range ke {
				w.drawn = append(w.drawn, w.draw(R, w.pools[1], i < kd, rng))
			}
		}
		if lhs {
			for i := range ke {
				w.drawn = append(w.drawn, w.draw(L, w.pools[0], i < kd, rng))
			}
		}
	}
}

// census counts the batch's rows for early updates on each side whose
// table is large enough (earlyTable): the side's positives (as many) and
// the negatives drawNegatives drew for it. With early, a side counted has
// census.on; without, no side has.
func (w *Worker) census(b Batch, cs, ke int, rhs, lhs, early bool, grR *rowGrads) {
	left, right := &w.gl.census, &grR.census
	left.on, right.on = false, false
	if !early || len(w.drawn) == 0 {
		return
	}
	n := len(b.Lhs)
	sides := 0
	for _, c := range []struct {
		on   bool
		cen  *rowCensus
		rows int
	}{{earlyTable(w.gl.tab), left, 2*n + len(w.drawn)}, {earlyTable(grR.tab), right, 2*n + len(w.drawn)}} {
		if c.on && !c.cen.on {
			c.cen.on = true
			c.cen.reset(c.rows)
			sides++
		}
	}
	if sides == 0 {
		return
	}
	for i := range n {
		if left.on {
			left.note(b.Lhs[i], true)
		}
		if right.on {
			right.note(b.Rhs[i], true)
		}
	}
	at := 0
	for c0 := 0; c0 < n; c0 += cs {
		if rhs {
			if right.on {
				for _, r := range w.drawn[at : at+ke] {
					if r&farBit == 0 {
						right.note(r, false)
					}
				}
			}
			at += ke
		}
		if lhs {
			if left.on {
				for _, r := range w.drawn[at : at+ke] {
					if r&farBit == 0 {
						left.note(r, false)
					}
				}
			}
			at += ke
		}
	}
}

// scatterEarly is scatter for a chunk's uniform negatives with early
// updates on: a row that occurs once in the batch takes its Adagrad step
// now, the others add their gradient to rg as scatter does.
func (w *Worker) scatterEarly(rg *rowGrads, ids []uint32, g []float32) {
	d, lr, tab := w.d, w.m.S.Lr, rg.tab
	for _, id := range ids[:min(w.ahead, len(ids))] {
		kern.Prefetch(tab.Row(int(id)))
		kern.Prefetch(tab.Acc[id : id+1])
	}
	for i, id := range ids {
		if a := i + w.ahead; w.ahead > 0 && a < len(ids) {
			kern.Prefetch(tab.Row(int(ids[a])))
			kern.Prefetch(tab.Acc[ids[a] : ids[a]+1])
		}
		gi := g[i*d : (i+1)*d]
		if rg.census.once(id) {
			tab.Update(int(id), gi, lr, w.scratch)
			w.earlyRows++
		} else {
			rg.add(id, gi)
		}
		if w.dglob != nil {
			addTo(w.dglob[rg.typ], gi)
		}
	}
}
