package source

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestAdvance: Advance(n) lands where NextK(n) does (invariant 2 with the
// data skipped), counts labels as Next does (invariant 4), keeps the step,
// and a count that ends inside a sequence leaves the Source where it was.
func TestAdvance(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tc := makeCorpus(t, rng, corpusOpts{n: 31, chunkSeq: 3, labels: true})
	for _, kind := range kinds() {
		cfg := randomConfig(rng, kind)
		cfg.EpochSize = 7
		a, b := mustNew(t, tc, cfg), mustNew(t, tc, cfg)
		for i := 0; i < 40; i++ {
			k := 1 + rng.IntN(12)
			mb, err := a.NextK(k)
			if err != nil {
				t.Fatal(err)
			}
			step := b.step
			if err := b.Advance(mb.End - mb.Start); err != nil {
				t.Fatal(err)
			}
			if b.Position() != a.Position() || b.Epoch() != a.Epoch() || b.step != step {
				t.Fatalf("%s: after advance: position %d epoch %d step %d, NextK gives %d %d (step %d)", kind, b.Position(), b.Epoch(), b.step, a.Position(), a.Epoch(), step)
			}
		}
		want, err := a.NextK(5)
		if err != nil {
			t.Fatal(err)
		}
		w := slices.Clone(want.Sequences)
		// An advance into the middle of a sequence longer than one sample.
		pos := b.Position()
		for n := uint64(1); n < 6; n++ {
			if err := b.Advance(n); err != nil && b.Position() != pos {
				t.Fatalf("%s: a refused advance moved the source to %d", kind, b.Position())
			}
			if b.Position() != pos {
				break
			}
		}
		if b.Position() == pos {
			got, err := b.NextK(5)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Sequences, w) {
				t.Fatalf("%s: after refused advances: %v, want %v", kind, got.Sequences, w)
			}
		}
	}
}

func TestSplitRangeExported(t *testing.T) {
	prefix := []uint64{0, 3, 4, 5, 6}
	if lo, hi := SplitRange(prefix, 2, 0); lo != 0 || hi != 1 {
		t.Fatalf("rank 0: [%d,%d), want [0,1)", lo, hi)
	}
}
