package mixture

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/batchprep/batchprep/corpus/source"
)

// TestProportionBound checks invariant 1 after every minibatch, over random
// weights (decimals and sample counts), sequence lengths, corpus sizes and
// minibatch sizes, in exact integer arithmetic: with A the weights' sum,
// -a_k * (sum_{j != k} L_j) <= A*c_k - a_k*T <= (A - a_k) * L_k.
// It also checks that the delivered data are each sequence's own.
func TestProportionBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 60; trial++ {
		tcs, cs := randomMixture(t, rng, false)
		cfg := randomConfig(rng)
		cfg.EpochSize = source.EpochInf
		m := mustNew(t, cs, cfg)
		w := m.Weights()
		var A, sumL big.Int
		L := make([]uint64, len(tcs))
		for k, tc := range tcs {
			A.Add(&A, new(big.Int).SetUint64(w[k]))
			for _, s := range tc.Layout().Samples {
				L[k] = max(L[k], uint64(s))
			}
			sumL.Add(&sumL, new(big.Int).SetUint64(L[k]))
		}
		for step := 0; step < 80; step++ {
			mb, err := m.NextK(1 + rng.IntN(30))
			if err != nil {
				t.Fatal(err)
			}
			checkData(t, tcs, mb)
			c := m.CorpusPositions()
			var T uint64
			for _, v := range c {
				T += v
			}
			if T != mb.End {
				t.Fatalf("trial %d: corpus positions sum to %d, mixture at %d", trial, T, mb.End)
			}
			for k := range c {
				ak := new(big.Int).SetUint64(w[k])
				dev := new(big.Int).Mul(&A, new(big.Int).SetUint64(c[k]))
				dev.Sub(dev, new(big.Int).Mul(ak, new(big.Int).SetUint64(T)))
				lo := new(big.Int).Sub(&sumL, new(big.Int).SetUint64(L[k]))
				lo.Neg(lo.Mul(lo, ak))
				hi := new(big.Int).Sub(&A, ak)
				hi.Mul(hi, new(big.Int).SetUint64(L[k]))
				if dev.Cmp(lo) < 0 || dev.Cmp(hi) > 0 {
					t.Fatalf("trial %d step %d corpus %d: A*c_k - a_k*T = %v outside [%v, %v] (c=%v, w=%v, L=%v)", trial, step, k, dev, lo, hi, c, w, L)
				}
			}
		}
	}
}

// TestOwnTimelines checks invariant 2: each corpus's sequences, in the
// mixture's order, are those of its own Source with the derived seed.
func TestOwnTimelines(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 20; trial++ {
		tcs, cs := randomMixture(t, rng, false)
		cfg := randomConfig(rng)
		cfg.EpochSize = source.EpochInf
		m := mustNew(t, cs, cfg)
		got := make([][]int, len(tcs))
		for step := 0; step < 40; step++ {
			mb, err := m.NextK(1 + rng.IntN(20))
			if err != nil {
				t.Fatal(err)
			}
			for i, o := range mb.Sequences {
				got[mb.Corpus[i]] = append(got[mb.Corpus[i]], o)
			}
		}
		for k, tc := range tcs {
			sc := source.Config{Randomize: cfg.Randomize, EpochSize: source.EpochInf}
			sc.Randomize.Seed = derivedSeed(cfg.Randomize.Seed, k)
			s, err := source.New(tc, sc)
			if err != nil {
				t.Fatal(err)
			}
			var want []int
			for len(want) < len(got[k]) {
				mb, err := s.NextK(1)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, mb.Sequences...)
			}
			s.Close()
			for i := range got[k] {
				if got[k][i] != want[i] {
					t.Fatalf("trial %d corpus %d: sequence %d is %d, its own timeline has %d", trial, k, i, got[k][i], want[i])
				}
			}
		}
	}
}
