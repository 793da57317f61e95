package sched

import (
	"fmt"

	"github.com/batchprep/batchprep/graph"
)

// Pass describes one pass: the grid, the pass's bucket order (the
// preference among free buckets) and whether the first-pass rule applies.
type Pass struct {
	L, R     int
	Order    []graph.Bucket // every bucket once; nil means lexicographic
	TreeInit bool           // invariant 3 applies (epoch 0's first pass)
}

// State is the scheduler's view of one pass: which buckets are done, which
// are held, which partitions are locked and which were given a bucket.
// It is not safe for concurrent use.
type State struct {
	pass   Pass
	prio   []int  // bucket slot -> place in Order
	done   []bool // bucket slot
	held   []bool // bucket slot
	locks  []int  // partition -> held buckets using it (0 or 1)
	given  []bool // partition -> was in a bucket given this pass
	nDone  int
	nGiven int // buckets given this pass, abandoned ones included
}

// NewState returns the state of a pass where nothing was given yet. It
// panics if Order is not a permutation of the grid (a programmer error).
func NewState(p Pass) *State {
	n := p.L * p.R
	s := &State{pass: p, prio: make([]int, n), done: make([]bool, n), held: make([]bool, n),
		locks: make([]int, max(p.L, p.R)), given: make([]bool, max(p.L, p.R))}
	if p.Order == nil {
		for i := range s.prio {
			s.prio[i] = i
		}
		return s
	}
	if len(p.Order) != n {
		panic(fmt.Sprintf("sched: order has %d buckets, grid %dx%d", len(p.Order), p.L, p.R))
	}
	for i := range s.prio {
		s.prio[i] = -1
	}
	for i, b := range p.Order {
		k := s.slot(b)
		if s.prio[k] >= 0 {
			panic(fmt.Sprintf("sched: bucket (%d,%d) twice in the order", b.Lhs, b.Rhs))
		}
		s.prio[k] = i
	}
	return s
}

// Pass returns the pass s describes.
func (s *State) Pass() Pass { return s.pass }

func (s *State) slot(b graph.Bucket) int {
	if b.Lhs < 0 || b.Lhs >= s.pass.L || b.Rhs < 0 || b.Rhs >= s.pass.R {
		panic(fmt.Sprintf("sched: bucket (%d,%d) outside the %dx%d grid", b.Lhs, b.Rhs, s.pass.L, s.pass.R))
	}
	return b.Lhs*s.pass.R + b.Rhs
}

func (s *State) bucket(k int) graph.Bucket { return graph.Bucket{Lhs: k / s.pass.R, Rhs: k % s.pass.R} }

// Done reports whether b is done in this pass.
func (s *State) Done(b graph.Bucket) bool { return s.done[s.slot(b)] }

// Held reports whether b is held.
func (s *State) Held(b graph.Bucket) bool { return s.held[s.slot(b)] }

// NumDone is the number of done buckets.
func (s *State) NumDone() int { return s.nDone }

// Complete reports whether every bucket of the pass is done.
func (s *State) Complete() bool { return s.nDone == len(s.done) }

// NumHeld is the number of held buckets.
func (s *State) NumHeld() int {
	n := 0
	for _, h := range s.held {
		if h {
			n++
		}
	}
	return n
}

// Claimable reports whether b may be given now: not done, not held, its
// partitions unlocked (invariant 2), and the first-pass rule (invariant 3).
func (s *State) Claimable(b graph.Bucket) bool {
	k := s.slot(b)
	if s.done[k] || s.held[k] || s.locks[b.Lhs] > 0 || s.locks[b.Rhs] > 0 {
		return false
	}
	return !s.pass.TreeInit || s.nGiven == 0 || s.given[b.Lhs] || s.given[b.Rhs]
}

// Claim records that b was given. It returns an error if b is not
// claimable (the caller's view was stale).
func (s *State) Claim(b graph.Bucket) error {
	if !s.Claimable(b) {
		return fmt.Errorf("sched: bucket (%d,%d) is not claimable", b.Lhs, b.Rhs)
	}
	s.MarkHeld(b)
	return nil
}

// MarkHeld records that b is held, without checking (a state rebuilt from
// the coordination store, where the store already decided).
func (s *State) MarkHeld(b graph.Bucket) {
	k := s.slot(b)
	if s.held[k] {
		return
	}
	s.held[k] = true
	s.locks[b.Lhs]++
	if b.Rhs != b.Lhs {
		s.locks[b.Rhs]++
	}
	s.MarkGiven(b)
}

// MarkGiven records that b was given at some time in this pass (for
// invariant 3), whatever became of it.
func (s *State) MarkGiven(b graph.Bucket) {
	s.given[b.Lhs], s.given[b.Rhs] = true, true
	s.nGiven++
}

// Finish marks the held bucket b done and unlocks its partitions.
func (s *State) Finish(b graph.Bucket) {
	s.release(b)
	s.MarkDone(b)
}

// MarkDone marks b done (a state rebuilt from the store).
func (s *State) MarkDone(b graph.Bucket) {
	k := s.slot(b)
	if !s.done[k] {
		s.done[k] = true
		s.nDone++
	}
}

// Abandon unlocks the held bucket b and returns it to the pool: its holder
// died or lost its lease, and its work does not count.
func (s *State) Abandon(b graph.Bucket) { s.release(b) }

func (s *State) release(b graph.Bucket) {
	k := s.slot(b)
	if !s.held[k] {
		panic(fmt.Sprintf("sched: bucket (%d,%d) is not held", b.Lhs, b.Rhs))
	}
	s.held[k] = false
	s.locks[b.Lhs]--
	if b.Rhs != b.Lhs {
		s.locks[b.Rhs]--
	}
}

// NumGiven is the number of buckets given in this pass (MarkGiven calls).
func (s *State) NumGiven() int { return s.nGiven }
