package train

import (
	"slices"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/graph/bucket"
)

// The partition buffer (docs/training.md, "The partition buffer"): a run
// holds up to c = partition_buffer partitions of each entity type. Before
// a bucket trains, its partitions are admitted (bucket.Admit): when a
// type's buffer is full, the resident partition the bucket does not train
// whose next use is furthest ahead leaves (Belady's rule), written back
// when changed, dropped when not. The buffer's content is a function of
// the plan's position alone: a run resumed at a position rebuilds it by
// replaying the admissions from the plan's start, so that what is
// resident (which buffer negatives draw from) does not depend on where a
// run was stopped.

// residency is the buffer's content: the resident partitions of each
// entity type, sorted.
type residency struct {
	c   int
	res map[int][]int
}

func newResidency(c int) *residency { return &residency{c: c, res: map[int][]int{}} }

// has reports whether k is resident.
func (r *residency) has(k tableKey) bool { return slices.Contains(r.res[k.typ], k.part) }

// keys lists the resident partitions in (type, partition) order.
func (r *residency) keys() []tableKey {
	var out []tableKey
	for typ, parts := range r.res {
		for _, p := range parts {
			out = append(out, tableKey{typ, p})
		}
	}
	slices.SortFunc(out, compareKeys)
	return out
}

func compareKeys(a, b tableKey) int {
	if a.typ != b.typ {
		return a.typ - b.typ
	}
	return a.part - b.part
}

// admit makes need resident, evicting by Belady's rule with next giving a
// partition's next use; it returns the partitions loaded (in need's order)
// and those evicted.
func (r *residency) admit(need []tableKey, next func(tableKey) int) (loaded, evicted []tableKey) {
	types := []int{}
	byType := map[int][]int{}
	for _, k := range need {
		if _, ok := byType[k.typ]; !ok {
			types = append(types, k.typ)
		}
		byType[k.typ] = append(byType[k.typ], k.part)
	}
	for _, typ := range types {
		now, in, out := bucket.Admit(r.res[typ], byType[typ], r.c, func(p int) int { return next(tableKey{typ, p}) })
		r.res[typ] = now
		for _, p := range out {
			evicted = append(evicted, tableKey{typ, p})
		}
		for _, p := range in {
			loaded = append(loaded, tableKey{typ, p})
		}
	}
	return loaded, evicted
}

// lookahead gives the next use of a partition from a position: the
// buckets of that position's pass after it, then those of the following
// pass (within the run's epochs); bucket.Never beyond. It caches the two
// passes' orders and uses.
type lookahead struct {
	t      *Trainer
	cache  map[Position]map[tableKey][]int // pass start -> uses of each key, by index
	orders map[Position][]graph.Bucket     // pass start -> its bucket order
}

func newLookahead(t *Trainer) *lookahead {
	return &lookahead{t: t, cache: map[Position]map[tableKey][]int{}, orders: map[Position][]graph.Bucket{}}
}

// order returns the bucket order of pos's pass.
func (la *lookahead) order(pos Position) []graph.Bucket {
	start := Position{Epoch: pos.Epoch, EdgeSet: pos.EdgeSet, Chunk: pos.Chunk}
	if o, ok := la.orders[start]; ok {
		return o
	}
	if len(la.orders) >= 3 {
		clear(la.orders)
	}
	o := la.t.plan.Order(start.Epoch, start.EdgeSet, start.Chunk)
	la.orders[start] = o
	return o
}

// uses returns, for the pass starting at start, each key's bucket indices.
func (la *lookahead) uses(start Position) map[tableKey][]int {
	if u, ok := la.cache[start]; ok {
		return u
	}
	if len(la.cache) >= 3 {
		clear(la.cache)
	}
	u := map[tableKey][]int{}
	for i, b := range la.order(start) {
		for _, k := range la.t.needed(b) {
			u[k] = append(u[k], i)
		}
	}
	la.cache[start] = u
	return u
}

// next returns the next use of k after the bucket at pos, as a distance
// in buckets.
func (la *lookahead) next(pos Position, k tableKey) int {
	l, r := la.t.plan.Shape()
	start := pos
	start.Index = 0
	u := la.uses(start)[k]
	if i, _ := slices.BinarySearch(u, pos.Index+1); i < len(u) {
		return u[i] - pos.Index
	}
	nextPass := la.t.advance(Position{Epoch: pos.Epoch, EdgeSet: pos.EdgeSet, Chunk: pos.Chunk, Index: l*r - 1}, l*r)
	if nextPass.Epoch >= la.t.cfg.NumEpochs {
		return bucket.Never
	}
	if v := la.uses(nextPass)[k]; len(v) > 0 {
		return l*r - pos.Index + v[0]
	}
	return bucket.Never
}

// changes lists the partitions training bucket b changes: its own and,
// with buffer negatives (negatives = "buffer"), every resident one, whose
// rows the uniform negatives update.
func (t *Trainer) changes(b graph.Bucket) []tableKey {
	if !t.cfg.BufferNegatives() {
		return t.needed(b)
	}
	return t.res.keys()
}

// admitAt admits the partitions of the bucket at pos.
func (t *Trainer) admitAt(pos Position, b graph.Bucket) (loaded, evicted []tableKey) {
	return t.res.admit(t.needed(b), func(k tableKey) int { return t.look.next(pos, k) })
}

// replayResidency rebuilds the buffer's content before the bucket at pos
// (admitted for it), replaying every admission from the plan's start.
func (t *Trainer) replayResidency(pos Position) {
	l, r := t.plan.Shape()
	t.res = newResidency(t.res.c)
	for p := (Position{}); p.Epoch <= pos.Epoch && p.Epoch < t.cfg.NumEpochs; p = t.advance(p, l*r) {
		t.admitAt(p, t.bucketAt(p))
		if p == pos {
			return
		}
	}
}
