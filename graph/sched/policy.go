package sched

import "github.com/batchprep/batchprep/graph"

// Policy chooses the bucket trainer rank (of world) is given among the
// claimable ones; prev is the bucket it finished last in this pass (nil at
// the pass's start). ok is false when nothing is claimable: the trainer
// waits.
type Policy func(s *State, prev *graph.Bucket, rank, world int) (b graph.Bucket, ok bool)

// Batchprep is batchprep's policy (invariant 4): a claimable bucket sharing
// a partition with prev first; among equals, the first in the pass's
// bucket order read cyclically from the rank's own starting place,
// rank*L*R/world. The rank's offset keeps trainers that look at the same
// state from all reaching for the same bucket (with etcd, all but one
// claim would fail and be retried). In the first pass (TreeInit) every
// rank reads the order from its start instead: that pass decides whether
// the partitions' embeddings share one space, the order the user chose
// decides how it grows (outside_in: partition 0 against every other
// first), and few buckets are claimable there at once anyway. A rank
// reading from the middle of the order would start the space, or grow it,
// from partitions the order puts late.
func Batchprep(s *State, prev *graph.Bucket, rank, world int) (graph.Bucket, bool) {
	n := len(s.done)
	off := 0
	if world > 0 && !s.pass.TreeInit {
		off = rank % world * n / world
	}
	best, bestKey := -1, 0
	for k := range s.done {
		b := s.bucket(k)
		if !s.Claimable(b) {
			continue
		}
		key := (s.prio[k] - off + n) % n
		if prev == nil || !shares(*prev, b) {
			key += len(s.done)
		}
		if best < 0 || key < bestKey {
			best, bestKey = k, key
		}
	}
	if best < 0 {
		return graph.Bucket{}, false
	}
	return s.bucket(best), true
}

// PBG is the policy of PyTorch-BigGraph's lock server, for comparison: the
// claimable buckets in lexicographic order (the pass's bucket order is not
// consulted), the one whose partitions differ least from prev's (the size
// of the symmetric difference of the two partition sets: what must be
// loaded plus what must be saved; a diagonal bucket has one partition), the
// lexicographically first among equals.
func PBG(s *State, prev *graph.Bucket, _, _ int) (graph.Bucket, bool) {
	best, bestCost := -1, 0
	for k := range s.done {
		b := s.bucket(k)
		if !s.Claimable(b) {
			continue
		}
		cost := len(b.Partitions())
		if prev != nil {
			cost = symDiff(prev.Partitions(), b.Partitions())
		}
		if best < 0 || cost < bestCost {
			best, bestCost = k, cost
		}
	}
	if best < 0 {
		return graph.Bucket{}, false
	}
	return s.bucket(best), true
}

// Policies names the policies the simulation compares.
var Policies = map[string]Policy{"batchprep": Batchprep, "pbg": PBG}

func shares(a, b graph.Bucket) bool {
	return a.Lhs == b.Lhs || a.Rhs == b.Rhs || a.Lhs == b.Rhs || a.Rhs == b.Lhs
}

func symDiff(a, b []int) int {
	n := 0
	for _, x := range a {
		if !contains(b, x) {
			n++
		}
	}
	for _, x := range b {
		if !contains(a, x) {
			n++
		}
	}
	return n
}

func contains(s []int, x int) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}
