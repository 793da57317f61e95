package plan

import (
	"fmt"
	"testing"

	"github.com/batchprep/batchprep/internal/mix"
)

// Statistical tests. Each uses fixed seeds (so it is deterministic) and a
// chi-square threshold at the 0.9999 quantile of its distribution: a correct
// implementation would fail with probability 1e-4 on fresh seeds.
func chi2(counts []float64, expect []float64) float64 {
	x := 0.0
	for i, c := range counts {
		x += (c - expect[i]) * (c - expect[i]) / expect[i]
	}
	return x
}

func uniform(k int, total float64) []float64 {
	e := make([]float64, k)
	for i := range e {
		e[i] = total / float64(k)
	}
	return e
}

// Invariant 3: the holdout is k distinct positions, each position equally
// likely. n=10, k=3: 10 cells, 9 dof, threshold 33.72.
func TestHoldoutUniform(t *testing.T) {
	const n, k, runs = 10, 3, 6000
	counts := make([]float64, n)
	marks := make([]uint32, 1)
	list := make([]uint32, n)
	for s := uint64(0); s < runs; s++ {
		clear(marks)
		sampleHoldout(marks, n, k, mix.Rand(s, 1))
		if c := listMarked(list, marks, n); c != k {
			t.Fatalf("seed %d: %d marked, want %d distinct", s, c, k)
		}
		for _, x := range list[:k] {
			counts[x]++
		}
	}
	if x := chi2(counts, uniform(n, runs*k)); x > 33.72 {
		t.Fatalf("holdout positions not uniform: chi-square %.1f > 33.72: %v", x, counts)
	}
}

// The shuffle of 4 elements hits all 24 orders equally: 23 dof, threshold
// 56.41. Then the blocked shuffle (m large enough for 4 blocks): the final
// position of element 0 and of the last element, in 4 bins, 3 dof each,
// threshold 21.11.
func TestShuffleUniform(t *testing.T) {
	perms := map[string]int{}
	dst := make([]uint32, 4)
	const runs = 12000
	for s := uint64(0); s < runs; s++ {
		shuffleTrain(dst, nil, 4, s, coords{}, 1, nil)
		perms[fmt.Sprint(dst)]++
	}
	if len(perms) != 24 {
		t.Fatalf("%d distinct orders of 4, want 24", len(perms))
	}
	var counts []float64
	for _, c := range perms {
		counts = append(counts, float64(c))
	}
	if x := chi2(counts, uniform(24, runs)); x > 56.41 {
		t.Fatalf("orders of 4 not uniform: chi-square %.1f", x)
	}

	defer func(old int) { blockTarget = old }(blockTarget)
	blockTarget = 1 << 9
	const big = 3000
	m := 2*blockTarget + 100
	if numBlocks(m) != 4 {
		t.Fatalf("numBlocks(%d) = %d", m, numBlocks(m))
	}
	dst = make([]uint32, m)
	first, last := make([]float64, 4), make([]float64, 4)
	for s := uint64(0); s < big; s++ {
		shuffleTrain(dst, nil, m, s, coords{epoch: 3}, 2, nil)
		for i, x := range dst {
			if x == 0 {
				first[i*4/m]++
			}
			if int(x) == m-1 {
				last[i*4/m]++
			}
		}
	}
	for _, c := range [][]float64{first, last} {
		if x := chi2(c, uniform(4, float64(big))); x > 21.11 {
			t.Fatalf("blocked shuffle: position not uniform: chi-square %.1f: %v", x, c)
		}
	}
	// A permutation, skipping marked positions.
	marks := make([]uint32, (m+31)/32)
	marks[0] = 0b1011
	dst = dst[:m-3]
	shuffleTrain(dst, marks, m, 1, coords{}, 2, nil)
	seen := make([]bool, m)
	for _, x := range dst {
		if seen[x] || x == 0 || x == 1 || x == 3 {
			t.Fatalf("position %d repeated or held out", x)
		}
		seen[x] = true
	}
}

// Invariant 6: the first batch's relation follows the part's relation
// counts (10, 30, 60 of 100): 2 dof, threshold 18.42.
func TestRelationPickProportional(t *testing.T) {
	rel := make([]uint32, 100)
	for i := range rel {
		switch {
		case i < 10:
			rel[i] = 0
		case i < 40:
			rel[i] = 1
		default:
			rel[i] = 2
		}
	}
	const runs = 5000
	counts := make([]float64, 3)
	part, tmp := make([]uint32, 100), make([]uint32, 100)
	cnt := make([]int, 3)
	for s := uint64(0); s < runs; s++ {
		for i := range part {
			part[i] = uint32(i)
		}
		b := relationBatches(nil, part, tmp, 0, rel, nil, cnt, 7, mix.Rand(s, 2))
		counts[b[0].rel]++
	}
	if x := chi2(counts, []float64{runs * .1, runs * .3, runs * .6}); x > 18.42 {
		t.Fatalf("first relation picks %v: chi-square %.1f", counts, x)
	}
}

// PBG test_batching cases: grouping keeps the original order inside a type
// (TestGroupByRelationType.test_basic) and batch_size 3 gives batches of at
// most 3 whose concatenation per type is the group (TestBatchEdgesGroupByType);
// contiguous batches of 4, 4, 2 in dynamic mode (TestBatchEdgesMixRelationTypes).
func TestPBGBatchingCases(t *testing.T) {
	rel := []uint32{1, 0, 0, 1, 2, 2, 0, 0, 2, 2}
	want := map[int32][]uint32{0: {1, 2, 6, 7}, 1: {0, 3}, 2: {4, 5, 8, 9}}
	for s := uint64(0); s < 20; s++ {
		part := []uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
		pk := (*packing)(nil)
		if s%2 == 1 { // both the packed and the plain grouping
			pk = newPacking(rel, 3)
			for i := range part {
				part[i] = pk.pack(i)
			}
		}
		out := make([]uint32, 10)
		bs := relationBatches(nil, part, out, 0, rel, pk, make([]int, 3), 3, mix.Rand(s, 3))
		got := map[int32][]uint32{}
		for _, b := range bs {
			if b.n > 3 || b.n < 1 {
				t.Fatalf("batch of %d", b.n)
			}
			got[b.rel] = append(got[b.rel], out[b.off:b.off+b.n]...)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("seed %d: groups %v, want %v", s, got, want)
		}
	}
	// Constant relation: one group.
	part := []uint32{0, 1, 2}
	bs := relationBatches(nil, part, make([]uint32, 3), 0, []uint32{3, 3, 3}, nil, make([]int, 4), 5, mix.Rand(0))
	if len(bs) != 1 || bs[0].rel != 3 || bs[0].n != 3 {
		t.Fatalf("constant relation: %+v", bs)
	}
	if bs := relationBatches(nil, nil, nil, 0, nil, nil, make([]int, 1), 5, mix.Rand(0)); len(bs) != 0 {
		t.Fatalf("empty: %+v", bs)
	}
	d := dynamicBatches(nil, 0, 10, 4)
	if len(d) != 3 || d[0].n != 4 || d[1].n != 4 || d[2].n != 2 || d[1].off != 4 || d[2].rel != -1 {
		t.Fatalf("dynamic: %+v", d)
	}
}

// Invariant 7: countSegment (the fast counting pass of the blocked shuffle)
// counts exactly what assignSegment's reference counting pass counts, for
// every mask, with and without holdout marks, on segments ending inside a
// bitmap word, and leaves both streams at the same point.
func TestCountSegmentMatchesAssign(t *testing.T) {
	for seed := uint64(0); seed < 40; seed++ {
		r := mix.Rand(seed, 77)
		n := 1 + r.IntN(5000)
		var marks []uint32
		if seed%3 != 0 {
			marks = make([]uint32, (n+31)/32)
			k := r.IntN(n + 1)
			sampleHoldout(marks, n, k, mix.Rand(seed, 78))
		}
		lo := 32 * r.IntN((n+31)/32)
		hi := n
		if seed%2 == 0 && lo+32 < n {
			hi = lo + 32*(1+r.IntN((n-lo)/32))
		}
		mask := uint64(1)<<r.IntN(9) - 1
		var want, got [maxBlocks]int
		r1, r2 := mix.Rand(seed, 79), mix.Rand(seed, 79)
		assignSegment(nil, &want, marks, lo, hi, r1, mask, nil)
		countSegment(&got, marks, lo, hi, r2, mask)
		if want != got {
			t.Fatalf("seed %d (n %d, [%d,%d), mask %#x): counts differ", seed, n, lo, hi, mask)
		}
		if r1.Uint64() != r2.Uint64() {
			t.Fatalf("seed %d: streams left at different points", seed)
		}
	}
}
