package bucket

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph"
	"github.com/batchprep/batchprep/internal/golden"
	"github.com/batchprep/batchprep/internal/mix"
)

var shapes = [][2]int{{4, 4}, {3, 5}, {5, 3}, {6, 1}, {1, 6}, {1, 1}, {2, 1}, {16, 16}, {7, 2}}

// Invariant 1: every order yields each bucket exactly once.
func TestEveryBucketOnce(t *testing.T) {
	for _, name := range Names {
		for _, sh := range shapes {
			for seed := uint64(0); seed < 20; seed++ {
				order, err := Make(name, sh[0], sh[1], mix.Rand(seed, 1))
				if err != nil {
					t.Fatal(err)
				}
				checkPermutation(t, fmt.Sprintf("%s %dx%d seed %d", name, sh[0], sh[1], seed), order, sh[0], sh[1])
			}
		}
	}
}

func checkPermutation(t *testing.T, what string, order []graph.Bucket, l, r int) {
	t.Helper()
	if len(order) != l*r {
		t.Fatalf("%s: %d buckets, want %d", what, len(order), l*r)
	}
	seen := map[graph.Bucket]bool{}
	for _, b := range order {
		if b.Lhs < 0 || b.Lhs >= l || b.Rhs < 0 || b.Rhs >= r {
			t.Fatalf("%s: bucket %v outside the grid", what, b)
		}
		if seen[b] {
			t.Fatalf("%s: bucket %v twice", what, b)
		}
		seen[b] = true
	}
}

func TestMakeErrors(t *testing.T) {
	if _, err := Make("zigzag", 2, 2, mix.Rand(0)); !errors.Is(err, ErrUnknownOrder) || !strings.Contains(err.Error(), "zigzag") {
		t.Fatalf("unknown order: %v", err)
	}
	if _, err := Make(Random, 0, 2, mix.Rand(0)); err == nil {
		t.Fatal("0 partitions accepted")
	}
}

// Invariant 4: same stream, same order; another stream, another order.
func TestDeterministic(t *testing.T) {
	for _, name := range Names {
		a, _ := Make(name, 8, 8, mix.Rand(3, 1))
		b, _ := Make(name, 8, 8, mix.Rand(3, 1))
		c, _ := Make(name, 8, 8, mix.Rand(4, 1))
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s: same seed, different orders", name)
		}
		if fmt.Sprint(a) == fmt.Sprint(c) {
			t.Errorf("%s: different seeds, same order", name)
		}
	}
}

// Invariant 4: golden pins (regenerate with go test -run Golden -update).
func TestGolden(t *testing.T) {
	var sb strings.Builder
	for _, sh := range [][2]int{{4, 4}, {3, 5}, {6, 1}} {
		for _, name := range Names {
			order, _ := Make(name, sh[0], sh[1], mix.Rand(2026, 7))
			fmt.Fprintf(&sb, "%-10s %dx%d", name, sh[0], sh[1])
			for _, b := range order {
				fmt.Fprintf(&sb, " (%d,%d)", b.Lhs, b.Rhs)
			}
			sb.WriteString("\n")
		}
	}
	golden.Check(t, "orders.golden", sb.String())
}

// The first bucket of a random order is uniform: chi-square over 16 cells
// with 15 degrees of freedom; threshold 44.26 is the 0.9999 quantile, so a
// correct implementation fails with probability 1e-4 for an arbitrary seed
// set, and the seeds here are fixed (the test is deterministic).
func TestRandomFirstUniform(t *testing.T) {
	const n = 16000
	counts := make([]float64, 16)
	for s := uint64(0); s < n; s++ {
		b := RandomOrder(4, 4, mix.Rand(s, 99))[0]
		counts[b.Lhs*4+b.Rhs]++
	}
	if x := chi2(counts, n/16.0); x > 44.26 {
		t.Fatalf("chi-square %.1f > 44.26: first bucket not uniform: %v", x, counts)
	}
}

func chi2(counts []float64, expect float64) float64 {
	x := 0.0
	for _, c := range counts {
		x += (c - expect) * (c - expect) / expect
	}
	return x
}

func TestShares(t *testing.T) {
	cases := []struct {
		a, b graph.Bucket
		want bool
	}{
		{bk(0, 1), bk(0, 2), true},
		{bk(0, 1), bk(2, 1), true},
		{bk(0, 1), bk(1, 2), true},
		{bk(0, 1), bk(2, 0), true},
		{bk(0, 1), bk(2, 3), false},
	}
	for _, c := range cases {
		if Shares(c.a, c.b) != c.want {
			t.Errorf("Shares(%v, %v) != %v", c.a, c.b, c.want)
		}
	}
}

func TestLoads(t *testing.T) {
	b := func(l, r int) graph.Bucket { return graph.Bucket{Lhs: l, Rhs: r} }
	cases := []struct {
		order []graph.Bucket
		want  int
	}{
		{nil, 0},
		{[]graph.Bucket{b(0, 0)}, 1},
		{[]graph.Bucket{b(0, 1)}, 2},
		{[]graph.Bucket{b(0, 1), b(1, 0)}, 2},
		{[]graph.Bucket{b(0, 1), b(1, 2)}, 3},
		{[]graph.Bucket{b(0, 1), b(2, 3)}, 4},
		{[]graph.Bucket{b(1, 1), b(0, 0), b(0, 1)}, 3},
	}
	for _, c := range cases {
		if got := Loads(c.order); got != c.want {
			t.Errorf("Loads(%v) = %d, want %d", c.order, got, c.want)
		}
	}
	if got := Sharing([]graph.Bucket{b(0, 1), b(1, 0), b(2, 3), b(3, 3)}); got != 2 {
		t.Errorf("Sharing = %d, want 2", got)
	}
}

func bk(l, r int) graph.Bucket { return graph.Bucket{Lhs: l, Rhs: r} }
