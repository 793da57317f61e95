package randomize

import (
	"math"
	"math/rand/v2"
	"testing"
)

// uniform stays in range, including bounds where rejection is frequent.
func TestUniformRange(t *testing.T) {
	g := rand.NewPCG(1, 2)
	for _, n := range []uint64{1, 2, 3, 7, 1 << 32, 1<<63 + 1, math.MaxUint64} {
		for range 2000 {
			if v := uniform(g, n); v >= n {
				t.Fatalf("uniform(%d) = %d", n, v)
			}
		}
	}
}

// uniform with n = 2^63+1 rejects about half of the raw draws; a modulo
// reduction would put 2/3 of the mass in the lower half instead of 1/2.
func TestUniformNoModuloBias(t *testing.T) {
	g := rand.NewPCG(3, 4)
	n := uint64(1<<63 + 1)
	const draws = 20000
	low := 0
	for range draws {
		if uniform(g, n) < n/2 {
			low++
		}
	}
	// Binomial(20000, 1/2): sd 71; 2/3 would be 13333.
	if low < 9500 || low > 10500 {
		t.Fatalf("%d of %d draws in the lower half", low, draws)
	}
}

// Fisher-Yates gives every one of the 3! = 6 orders of 3 elements equally
// often: chi-square with 5 degrees of freedom, failing at p < 1e-6.
func TestFisherYatesSixOrders(t *testing.T) {
	g := rand.NewPCG(5, 6)
	counts := map[[3]int]float64{}
	const trials = 60000
	for range trials {
		a := []int{0, 1, 2}
		fisherYates(a, g)
		counts[[3]int{a[0], a[1], a[2]}]++
	}
	if len(counts) != 6 {
		t.Fatalf("%d distinct orders", len(counts))
	}
	var x2 float64
	for _, o := range counts {
		x2 += (o - trials/6) * (o - trials/6) / (trials / 6)
	}
	if p := chiSquareTail(5, x2); p < 1e-6 {
		t.Fatalf("chi-square %.1f, p = %g", x2, p)
	}
}
