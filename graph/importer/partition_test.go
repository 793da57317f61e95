package importer

import (
	"context"

	"math/rand/v2"

	"github.com/batchprep/batchprep/graph/edgestore"

	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/internal/golden"
	"github.com/batchprep/batchprep/internal/mix"
)

// Invariant 5: the partition ranges are PBG's.
func TestPartStart(t *testing.T) {
	cases := []struct {
		n, parts int
		want     []int
	}{
		{10, 4, []int{0, 3, 5, 8, 10}},
		{3, 4, []int{0, 1, 2, 3, 3}},
		{0, 2, []int{0, 0, 0}},
		{7, 1, []int{0, 7}},
	}
	for _, c := range cases {
		for p, w := range c.want {
			if got := partStart(p, c.n, c.parts); got != w {
				t.Errorf("partStart(%d, %d, %d) = %d, want %d", p, c.n, c.parts, got, w)
			}
		}
		// PBG's get_partition: floor(pos * P / N) agrees with the ranges.
		for pos := 0; pos < c.n; pos++ {
			p := pos * c.parts / c.n
			if pos < partStart(p, c.n, c.parts) || pos >= partStart(p+1, c.n, c.parts) {
				t.Errorf("position %d of %d not in partition %d", pos, c.n, p)
			}
		}
	}
}

// Invariant 5: the shuffle is pinned (golden; regenerate with -update).
func TestShuffleGolden(t *testing.T) {
	var b strings.Builder
	for _, c := range []struct {
		seed uint64
		typ  string
		n    int
	}{{0, "node", 10}, {1, "node", 10}, {0, "user", 10}, {42, "node", 25}} {
		fmt.Fprintf(&b, "seed=%d type=%s n=%d: %v\n", c.seed, c.typ, c.n, shuffledOrder(c.seed, c.typ, c.n))
	}
	golden.Check(t, "shuffle.golden", b.String())
}

// The shuffle is uniform: over 24,000 seeds every permutation of 4
// entities appears about 1,000 times. Chi-square with 23 degrees of
// freedom; the threshold 60 is exceeded by chance with probability about
// 3e-5, and the test is deterministic (fixed seeds).
func TestShuffleUniform(t *testing.T) {
	counts := map[string]int{}
	const trials = 24000
	for s := uint64(0); s < trials; s++ {
		counts[fmt.Sprint(shuffledOrder(s, "node", 4))]++
	}
	if len(counts) != 24 {
		t.Fatalf("%d distinct permutations of 4", len(counts))
	}
	chi := 0.0
	for _, c := range counts {
		d := float64(c) - trials/24.0
		chi += d * d / (trials / 24.0)
	}
	if chi > 60 {
		t.Errorf("chi-square %.1f > 60", chi)
	}
}

func TestBoundedUnbiased(t *testing.T) {
	// n = 3 * 2^62 has a large rejection zone: a modulo reduction would
	// put 1/2 of the mass on the lowest third instead of 1/3.
	r := newTestRand()
	n := uint64(3) << 62
	low := 0
	const trials = 30000
	for i := 0; i < trials; i++ {
		v := boundedUint64(r, n)
		if v >= n {
			t.Fatalf("%d out of range", v)
		}
		if v < n/3 {
			low++
		}
	}
	if math.Abs(float64(low)/trials-1.0/3) > 0.02 {
		t.Errorf("lowest third got %.3f of the draws", float64(low)/trials)
	}
}

func newTestRand() *rand.Rand { return mix.Rand(99) }

// Invariant 5, end to end: the partitions of a fixed small graph (golden;
// regenerate with -update).
func TestImportPartitionsGolden(t *testing.T) {
	dir := t.TempDir()
	c := kgConfig(t, dir, 3, 1)
	in := dir + "/in.tsv"
	var text strings.Builder // a fixed formula, no random stream
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&text, "u%d\tbuys\ti%d\t1\nu%d\tfollows\tu%d\t2\ni%d\ttagged\tt%d\t3\n", (i*7)%23, (i*11)%17, i%13, (i*5)%29, i%17, i%4)
	}
	os.WriteFile(in, []byte(text.String()), 0o644)
	if _, err := Import(context.Background(), c, kgOptions(), []string{in}); err != nil {
		t.Fatal(err)
	}
	st, err := edgestore.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var b strings.Builder
	for _, typ := range c.EntityTypes() {
		for p := 0; p < c.Entities[typ].NumPartitions; p++ {
			names, err := st.EntityNames(typ, p)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s/%d: %q\n", typ, p, names)
		}
	}
	golden.Check(t, "partitions.golden", b.String())
}
