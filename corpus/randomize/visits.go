package randomize

import (
	"sync"
	"sync/atomic"

	"github.com/batchprep/batchprep/internal/mix"
)

// windowVisits is one window's visit order, grouped by chunk: the
// chunk-relative indices of the window's k-th placed chunk, in the order
// the sweep visits them, are visits[start[k]:start[k+1]]. order is the same
// visit order as ordinals, what the window's cursor yields: a cursor that
// finds it computed reads it instead of shuffling (windowCursor.load).
// rank[j] is the place of the order's j-th sequence among its chunk's
// visits, where an arrangement in this order puts it (RankedCursor).
// None is modified once done is set.
type windowVisits struct {
	sweep  uint64
	win    int
	once   sync.Once
	done   atomic.Bool // set once start, visits, order and rank are
	start  []int32
	visits []int32
	order  []int32
	rank   []int32
}

// keptVisits is how many windows' visit orders a window randomizer keeps:
// the one being read and the two PrepareVisits readies after it, and the
// one before, whose last chunks may still be loading.
const keptVisits = 4

// Visits implements VisitOrder. A window's whole order is computed once,
// by the first caller that asks about one of its chunks (others wait for
// it), with the same Fisher-Yates draws as the window's cursor: the
// window's sequences are shuffled as (placed chunk, index) pairs instead of
// ordinals, which is the same permutation (it depends only on the draws),
// and then dealt out by chunk.
func (r *window) Visits(s uint64, c int) []int32 {
	p := r.planOf(s)
	if c < 0 || c >= len(p.winOf) {
		return nil
	}
	i := int(p.winOf[c])
	v, _ := r.visitsOf(s, i)
	v.once.Do(func() { v.compute(p.sw, i) })
	k := p.placed[c] - p.sw.winStart[i]
	return v.visits[v.start[k]:v.start[k+1]:v.start[k+1]]
}

// PrepareVisits implements VisitOrder: the first call for a window starts
// its computation in a goroutine (Visits waits for it there, as sync.Once
// makes every caller wait for the call in progress); later calls cost a
// lookup.
func (r *window) PrepareVisits(s uint64, c int) bool {
	p := r.planOf(s)
	if c < 0 || c >= len(p.winOf) {
		return true // Visits returns nil at once
	}
	i := int(p.winOf[c])
	ready := r.prepare(p, i)
	// The two windows after it, so that a reader asking once per
	// minibatch finds each window's order ready a window before it loads
	// the window's first chunks (possibly ahead, in the background).
	for range 2 {
		if i++; i == p.sw.numWindows() {
			if p.sweep+1 == 0 {
				break
			}
			p, i = r.planOf(p.sweep+1), 0
		}
		r.prepare(p, i)
	}
	return ready
}

// prepare starts computing window i of plan p unless it was, and reports
// whether it is computed.
func (r *window) prepare(p *windowPlan, i int) bool {
	v, isNew := r.visitsOf(p.sweep, i)
	if isNew {
		go v.once.Do(func() { v.compute(p.sw, i) })
	}
	return v.done.Load()
}

// visitsOf returns the kept visit order of window i of sweep s, or a new
// one, not yet computed, that replaces the oldest kept (isNew).
func (r *window) visitsOf(s uint64, i int) (v *windowVisits, isNew bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.visits {
		if v.sweep == s && v.win == i {
			return v, false
		}
	}
	v = &windowVisits{sweep: s, win: i}
	if len(r.visits) == keptVisits {
		copy(r.visits, r.visits[1:])
		r.visits = r.visits[:keptVisits-1]
	}
	r.visits = append(r.visits, v)
	return v, true
}

func (v *windowVisits) compute(sw *windowSweep, i int) {
	l := sw.r.l
	chunks := sw.chunkOrder[sw.winStart[i]:sw.winStart[i+1]]
	v.start = make([]int32, len(chunks)+1)
	for k, ch := range chunks {
		first, end := l.Chunk(int(ch))
		v.start[k+1] = v.start[k] + int32(end-first)
	}
	pairs := make([]uint64, 0, v.start[len(chunks)])
	for k, ch := range chunks {
		first, end := l.Chunk(int(ch))
		for q := range end - first {
			pairs = append(pairs, uint64(k)<<32|uint64(q))
		}
	}
	fisherYates(pairs, mix.PCG(sw.r.seed, sw.sweep, uint64(i)))
	v.visits = make([]int32, len(pairs))
	v.order = make([]int32, len(pairs))
	v.rank = make([]int32, len(pairs))
	next := append([]int32(nil), v.start[:len(chunks)]...)
	firsts := make([]int32, len(chunks))
	for k, ch := range chunks {
		first, _ := l.Chunk(int(ch))
		firsts[k] = int32(first)
	}
	for j, pq := range pairs {
		k, q := pq>>32, int32(uint32(pq))
		v.visits[next[k]] = q
		v.rank[j] = next[k] - v.start[k]
		next[k]++
		v.order[j] = firsts[k] + q
	}
	v.done.Store(true)
}

// computedOrder returns window i of sweep s's visit order as ordinals, and
// their ranks, if it is kept and computed, else nil, without waiting or
// starting anything.
func (r *window) computedOrder(s uint64, i int) (order, rank []int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.visits {
		if v.sweep == s && v.win == i && v.done.Load() {
			return v.order, v.rank
		}
	}
	return nil, nil
}
