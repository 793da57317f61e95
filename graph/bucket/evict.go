package bucket

import (
	"math"
	"slices"

	"github.com/batchprep/batchprep/graph"
)

// Never is the next use of a partition that is not used again.
const Never = math.MaxInt

// Admit makes the partitions of need (at most c distinct) resident in a
// buffer of c partitions that holds resident, by Belady's rule: when the
// buffer is full, the partition leaving is the resident one, not needed
// now, whose next use (next(p): a position, larger is later, Never for
// none) is furthest; ties go to the larger partition number. It returns
// the new resident set (sorted), the partitions loaded (in need's order)
// and the partitions evicted (in eviction order). resident is not changed.
func Admit(resident, need []int, c int, next func(p int) int) (now, loaded, evicted []int) {
	now = slices.Clone(resident)
	for _, p := range need {
		if !slices.Contains(now, p) && !slices.Contains(loaded, p) {
			loaded = append(loaded, p)
		}
	}
	for len(now)+len(loaded) > c {
		victim, far := -1, -1
		for _, p := range now {
			if slices.Contains(need, p) {
				continue
			}
			if u := next(p); u > far || u == far && p > victim {
				victim, far = p, u
			}
		}
		if victim < 0 {
			panic("bucket: a bucket needs more partitions than the buffer holds")
		}
		evicted = append(evicted, victim)
		now = slices.DeleteFunc(now, func(p int) bool { return p == victim })
	}
	now = append(now, loaded...)
	slices.Sort(now)
	return now, loaded, evicted
}

// BufferLoads counts the partition loads of an order with a buffer of c
// partitions (c >= 2) and Belady eviction (Admit), starting from an empty
// buffer; lhs and rhs partition p are one partition, as in Loads. With
// c = 2 it equals Loads except after a diagonal bucket (p, p): Loads then
// holds p alone, the buffer keeps the other partition it held, so
// BufferLoads(order, 2) <= Loads(order).
func BufferLoads(order []graph.Bucket, c int) int {
	uses := map[int][]int{}
	for k, b := range order {
		uses[b.Lhs] = append(uses[b.Lhs], k)
		if b.Rhs != b.Lhs {
			uses[b.Rhs] = append(uses[b.Rhs], k)
		}
	}
	ptr := map[int]int{}
	var resident []int
	n := 0
	for k, b := range order {
		next := func(p int) int {
			u := uses[p]
			i := ptr[p]
			for i < len(u) && u[i] <= k {
				i++
			}
			ptr[p] = i
			if i == len(u) {
				return Never
			}
			return u[i]
		}
		need := []int{b.Lhs}
		if b.Rhs != b.Lhs {
			need = append(need, b.Rhs)
		}
		var loaded []int
		resident, loaded, _ = Admit(resident, need, c, next)
		n += len(loaded)
	}
	return n
}

// LowerBound is the fewest partition loads any order of an l x r grid
// can cause with a buffer of c partitions (c >= 2), starting empty: every
// partition is loaded at least once, and a bucket (i, j) trains only when
// i and j are resident together, which first happens when one of them is
// loaded: the k-th load of the first c makes at most k-1 new pairs
// resident, every later one at most c-1. At l = r = 16 it is 121 with
// c = 2, 42 with c = 4 and 22 with c = 8.
func LowerBound(l, r, c int) int {
	n := max(l, r)
	pairs := 0
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if i < l && j < r || j < l && i < r {
				pairs++
			}
		}
	}
	loads, covered := 0, 0
	for covered < pairs {
		loads++
		covered += min(loads-1, c-1)
	}
	return max(loads, n)
}
