package mixture

import (
	"math/rand/v2"
	"testing"

	"github.com/batchprep/batchprep/corpus/source"
)

// TestSeekMatchesReading checks invariant 7's seek: Seek(P) lands on the
// first boundary at or after P of the timeline a read from 0 walks, with
// the same corpus positions, epoch and next minibatch.
func TestSeekMatchesReading(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for trial := 0; trial < 20; trial++ {
		_, cs := randomMixture(t, rng, true)
		cfg := randomConfig(rng)
		cfg.EpochSize = source.EpochSize(1 + rng.IntN(50))
		m := mustNew(t, cs, cfg)
		var bounds []uint64
		var pos [][]uint64
		for m.Position() < 400 {
			bounds = append(bounds, m.Position())
			pos = append(pos, m.CorpusPositions())
			if _, err := m.NextK(1); err != nil {
				t.Fatal(err)
			}
		}
		s := mustNew(t, cs, cfg)
		for i := 0; i < 30; i++ {
			p := rng.Uint64N(bounds[len(bounds)-1] + 1)
			j := 0
			for bounds[j] < p {
				j++
			}
			if err := s.Seek(p); err != nil {
				t.Fatal(err)
			}
			if s.Position() != bounds[j] {
				t.Fatalf("trial %d: Seek(%d) at %d, want %d", trial, p, s.Position(), bounds[j])
			}
			for k, c := range s.CorpusPositions() {
				if c != pos[j][k] {
					t.Fatalf("trial %d: Seek(%d): corpus %d at %d, want %d", trial, p, k, c, pos[j][k])
				}
			}
		}
	}
}

// TestSeekFarCostsAWindow checks that a seek to sweep 10^9 of the largest
// corpus walks at most the sum of the longest sequences and loads no more
// chunks than a seek near the start, and that reading goes on from there.
func TestSeekFarCostsAWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	var cs []Corpus
	var margin uint64
	for k := 0; k < 3; k++ {
		tc := makeCorpus(t, rng, k, corpusOpts{n: 20 + 30*k, maxLen: 6, chunkSeq: 4})
		cs = append(cs, Corpus{tc, Weight{Num: uint64(k + 1), Den: 1}, "m"})
		var l uint64
		for _, s := range tc.Layout().Samples {
			l = max(l, uint64(s))
		}
		margin += l
	}
	cfg := source.Config{EpochSize: source.EpochInf}
	cfg.Randomize.WindowChunks = 2
	m := mustNew(t, cs, cfg)
	a := m.lanes[m.Anchor()]
	far := a.sweepM * 1_000_000_000 * m.total / a.weight
	loads := map[uint64]int{}
	for _, p := range []uint64{100, far} {
		before := m.ChunkLoads()
		if err := m.Seek(p); err != nil {
			t.Fatal(err)
		}
		if uint64(m.seekSteps) > margin {
			t.Fatalf("Seek(%d) walked %d sequences, more than %d", p, m.seekSteps, margin)
		}
		for i := 0; i < 5; i++ {
			if _, err := m.NextK(16); err != nil {
				t.Fatal(err)
			}
		}
		loads[p] = m.ChunkLoads() - before
	}
	if loads[far] > loads[100]+6 {
		t.Fatalf("chunk loads after a far seek %d, near %d", loads[far], loads[100])
	}
}

// TestEpochFullIsAnchorSweep checks invariant 5: with EpochFull, epoch e
// ends exactly where the anchor corpus ends its sweep e.
func TestEpochFullIsAnchorSweep(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	for trial := 0; trial < 15; trial++ {
		_, cs := randomMixture(t, rng, false)
		cfg := randomConfig(rng)
		cfg.Schedule = source.ConstantSchedule(1 + rng.IntN(30))
		m := mustNew(t, cs, cfg)
		a := m.lanes[m.Anchor()]
		for k, ln := range m.lanes {
			if cmpKeys(ln.sweepM, ln.weight, a.sweepM, a.weight) > 0 {
				t.Fatalf("corpus %d's sweep is longer than the anchor's", k)
			}
		}
		for i := 0; i < 40; i++ {
			from := a.pos
			mb, err := m.Next()
			if err != nil {
				t.Fatal(err)
			}
			ap := a.pos
			ends := ap/a.sweepM > from/a.sweepM
			if mb.EndOfEpoch != ends || mb.EndOfEpoch != mb.EndOfSweep || (ends && ap%a.sweepM != 0) {
				t.Fatalf("trial %d step %d: end of epoch %v, sweep %v, anchor from %d to %d of %d", trial, i, mb.EndOfEpoch, mb.EndOfSweep, from, ap, a.sweepM)
			}
			if uint64(mb.Epoch) != mb.Sweep || mb.Sweep != from/a.sweepM {
				t.Fatalf("trial %d step %d: epoch %d sweep %d, anchor at %d", trial, i, mb.Epoch, mb.Sweep, ap)
			}
		}
	}
}
