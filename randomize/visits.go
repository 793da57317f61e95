package randomize

import (
	"sync"

	"github.com/batchprep/batchprep/internal/mix"
)

// windowVisits is one window's visit order, grouped by chunk: the
// chunk-relative indices of the window's k-th placed chunk, in the order
// the sweep visits them, are visits[start[k]:start[k+1]].
type windowVisits struct {
	sweep  uint64
	win    int
	once   sync.Once
	start  []int32
	visits []int32
}

// keptVisits is how many windows' visit orders a window randomizer keeps:
// the one being read and the next (prefetched), with room for a reader
// that crosses a sweep boundary.
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
	v := r.visitsOf(s, i)
	v.once.Do(func() { v.compute(p.sw, i) })
	k := p.placed[c] - p.sw.winStart[i]
	return v.visits[v.start[k]:v.start[k+1]:v.start[k+1]]
}

// visitsOf returns the kept visit order of window i of sweep s, or a new
// one, not yet computed, that replaces the oldest kept.
func (r *window) visitsOf(s uint64, i int) *windowVisits {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range r.visits {
		if v.sweep == s && v.win == i {
			return v
		}
	}
	v := &windowVisits{sweep: s, win: i}
	if len(r.visits) == keptVisits {
		copy(r.visits, r.visits[1:])
		r.visits = r.visits[:keptVisits-1]
	}
	r.visits = append(r.visits, v)
	return v
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
	next := append([]int32(nil), v.start[:len(chunks)]...)
	for _, pq := range pairs {
		k := pq >> 32
		v.visits[next[k]] = int32(uint32(pq))
		next[k]++
	}
}
