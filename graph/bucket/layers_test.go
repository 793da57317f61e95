package bucket

import (
	"fmt"
	"testing"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/internal/mix"
)

// Invariant 2: layers in order, transposes adjacent.
func TestLayerStructure(t *testing.T) {
	for _, sh := range shapes {
		l, r := sh[0], sh[1]
		for seed := uint64(0); seed < 20; seed++ {
			for _, name := range []string{OutsideIn, InsideOut} {
				order, _ := Make(name, l, r, mix.Rand(seed, 5))
				what := fmt.Sprintf("%s %dx%d seed %d", name, l, r, seed)
				checkPermutation(t, what, order, l, r)
				checkLayers(t, what, order, l, r, name == InsideOut)
			}
		}
	}
}

func checkLayers(t *testing.T, what string, order []graph.Bucket, l, r int, reverse bool) {
	t.Helper()
	pos := map[graph.Bucket]int{}
	for i, b := range order {
		pos[b] = i
		if i == 0 {
			continue
		}
		prev, cur := min(order[i-1].Lhs, order[i-1].Rhs), min(b.Lhs, b.Rhs)
		if !reverse && cur < prev || reverse && cur > prev {
			t.Fatalf("%s: layer %d after layer %d at %d", what, cur, prev, i)
		}
	}
	for b, i := range pos {
		tr := b.Transpose()
		if j, ok := pos[tr]; ok && tr != b && j != i-1 && j != i+1 {
			t.Fatalf("%s: %v at %d, its transpose at %d", what, b, i, j)
		}
	}
}

// Inside a layer the pairs come in random order: over seeds, the first group
// of layer 0 in a 4x4 outside_in order is each of the 4 groups (the diagonal
// and three pairs) equally often. Chi-square, 3 degrees of freedom, threshold
// 21.11 (0.9999 quantile: expected false-failure rate 1e-4; seeds fixed).
func TestLayerGroupsUniform(t *testing.T) {
	const n = 8000
	counts := make([]float64, 4)
	for s := uint64(0); s < n; s++ {
		b := OutsideInOrder(4, 4, mix.Rand(s, 11))[0]
		counts[max(b.Lhs, b.Rhs)]++
	}
	if x := chi2(counts, n/4.0); x > 21.11 {
		t.Fatalf("chi-square %.1f: %v", x, counts)
	}
}

func TestInsideOutIsReversedLayers(t *testing.T) {
	// Same stream: inside_out's layers are outside_in's, last first.
	a := OutsideInOrder(5, 3, mix.Rand(1, 2))
	b := InsideOutOrder(5, 3, mix.Rand(1, 2))
	var la, lb [3][]graph.Bucket
	for _, x := range a {
		la[min(x.Lhs, x.Rhs)] = append(la[min(x.Lhs, x.Rhs)], x)
	}
	for _, x := range b {
		lb[min(x.Lhs, x.Rhs)] = append(lb[min(x.Lhs, x.Rhs)], x)
	}
	if fmt.Sprint(la) != fmt.Sprint(lb) {
		t.Fatalf("layers differ:\n%v\n%v", la, lb)
	}
	if min(b[0].Lhs, b[0].Rhs) != 2 {
		t.Fatalf("inside_out starts in layer %d", min(b[0].Lhs, b[0].Rhs))
	}
}
