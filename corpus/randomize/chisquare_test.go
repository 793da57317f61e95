package randomize

import (
	"math"
	"testing"
)

// Uniformity evidence for the window randomizer (invariant 7).
//
// The check. Shuffle N items T times and count O[i][j], how often item i
// lands at position j. Under a uniform shuffle E[O[i][j]] = T/N. Pearson's
// X^2 = sum over the N*N cells of (O-E)^2/E. Every row and column of O sums
// to T, so O lives in a space of (N-1)^2 free dimensions; one uniform
// permutation matrix, centred, has an isotropic covariance there (the
// S_N x S_N symmetry acts irreducibly on it) with total variance N-1, so
// X^2 * (N-1)/N is asymptotically chi-square with (N-1)^2 degrees of freedom
// (X^2 itself has mean N(N-1), not (N-1)^2). The test fails when the
// upper-tail probability of that statistic is below alpha = 1e-6: a correct
// shuffle run on random seeds would fail once in a million runs. The seeds
// are fixed, so the outcome is deterministic; the p-values are logged.
// TestChiSquareRejectsNaiveShuffle shows that the check has the power to
// see the bias of CNTK's naive shuffle at the same T.
const chiAlpha = 1e-6

// positionStat returns the scaled statistic and its p-value for counts
// O[item][position] over trials permutations of n items.
func positionStat(counts [][]float64, trials int) (stat, p float64) {
	n := len(counts)
	e := float64(trials) / float64(n)
	var x2 float64
	for _, row := range counts {
		for _, o := range row {
			x2 += (o - e) * (o - e) / e
		}
	}
	stat = x2 * float64(n-1) / float64(n)
	df := float64((n - 1) * (n - 1))
	return stat, chiSquareTail(df, stat)
}

func newCounts(n int) [][]float64 {
	c := make([][]float64, n)
	for i := range c {
		c[i] = make([]float64, n)
	}
	return c
}

// A window larger than the corpus places every sequence uniformly over the
// sweep's positions: 8 sequences in chunks of 3, 2 and 3 (varying lengths),
// T = 20000 sweeps (seeds 0..3, sweeps 0..4999), 49 degrees of freedom;
// for chunk and sample windows larger than the corpus.
func TestChiSquareWholeCorpusWindow(t *testing.T) {
	l := layoutOf([]uint32{1, 2, 1}, []uint32{3, 1}, []uint32{1, 1, 2})
	for _, base := range []Config{{Kind: "window"}, {Kind: "window", WindowSamples: 12}} {
		cfg := base
		counts := newCounts(l.NumSequences())
		trials := 0
		for seed := range uint64(4) {
			cfg.Seed = seed
			rz := mustNew(t, cfg, l)
			for s := range uint64(5000) {
				for pos, q := range walk(t, rz, l, s) {
					counts[q][pos]++
				}
				trials++
			}
		}
		stat, p := positionStat(counts, trials)
		t.Logf("%+v: statistic %.1f on 49 df, p = %.3g", base, stat, p)
		if p < chiAlpha {
			t.Fatalf("%+v: positions are not uniform: statistic %.1f on 49 df, p = %g", base, stat, p)
		}
	}
}

// The chunk order of a sweep is uniform: 6 chunks over 20000 sweeps, 25 df.
func TestChiSquareChunkOrder(t *testing.T) {
	l := uniformLayout(6, 2, 1)
	counts := newCounts(6)
	trials := 0
	for seed := range uint64(4) {
		rz := mustNew(t, Config{Kind: "window", Seed: seed, WindowChunks: 1}, l)
		for s := range uint64(5000) {
			for k, c := range rz.Sweep(s).(*windowSweep).chunkOrder {
				counts[c][k]++
			}
			trials++
		}
	}
	stat, p := positionStat(counts, trials)
	t.Logf("chunk order: statistic %.1f on 25 df, p = %.3g", stat, p)
	if p < chiAlpha {
		t.Fatalf("chunk order is not uniform: statistic %.1f, p = %g", stat, p)
	}
}

// The same check, same T, fails for CNTK's naive shuffle (j = rng() % n for
// every i): the check can see a biased shuffle.
func TestChiSquareRejectsNaiveShuffle(t *testing.T) {
	const n, trials = 8, 20000
	counts := newCounts(n)
	a := make([]int32, n)
	for seed := range uint64(trials) {
		for i := range a {
			a[i] = int32(i)
		}
		naiveShuffle(a, newMT64(seed))
		for pos, q := range a {
			counts[q][pos]++
		}
	}
	stat, p := positionStat(counts, trials)
	t.Logf("naive shuffle: statistic %.1f on 49 df, p = %.3g", stat, p)
	if p >= chiAlpha {
		t.Fatalf("the check does not see the naive shuffle's bias: statistic %.1f, p = %g", stat, p)
	}
}

// chiSquareTail returns P(X >= x) for X chi-square with df degrees of
// freedom: the regularized upper incomplete gamma Q(df/2, x/2), by its
// power series below a+1 and its continued fraction (modified Lentz)
// above.
func chiSquareTail(df, x float64) float64 {
	if x <= 0 {
		return 1
	}
	a, z := df/2, x/2
	lg, _ := math.Lgamma(a)
	logPrefix := -z + a*math.Log(z) - lg
	const eps, tiny = 1e-15, 1e-300
	if z < a+1 {
		term := 1 / a
		sum := term
		for k := 1; k < 10000; k++ {
			term *= z / (a + float64(k))
			sum += term
			if term < sum*eps {
				break
			}
		}
		return 1 - sum*math.Exp(logPrefix)
	}
	b := z + 1 - a
	c := 1 / tiny
	d := 1 / b
	h := d
	for k := 1; k < 10000; k++ {
		an := -float64(k) * (float64(k) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return math.Exp(logPrefix) * h
}

// chiSquareTail against published critical values and a closed form.
func TestChiSquareTail(t *testing.T) {
	cases := []struct{ df, x, p, tol float64 }{
		{1, 3.841459, 0.05, 1e-5},
		{10, 18.307038, 0.05, 1e-5},
		{49, 66.338649, 0.05, 1e-4},
		{25, 37.652484, 0.05, 1e-5},
		{2, 5, math.Exp(-2.5), 1e-12}, // df 2: exp(-x/2) exactly
		{2, 60, math.Exp(-30), 1e-20},
	}
	for _, c := range cases {
		if got := chiSquareTail(c.df, c.x); math.Abs(got-c.p) > c.tol {
			t.Errorf("chiSquareTail(%g, %g) = %g, want %g", c.df, c.x, got, c.p)
		}
	}
}
