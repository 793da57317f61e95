package source

import (
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

// bruteBoundary is invariant 6's rule written out: the j minimizing
// |S_j*W - r*T|, the later j on a tie.
func bruteBoundary(prefix []uint64, w, r int) int {
	n := len(prefix) - 1
	if r == 0 {
		return 0
	}
	if r == w {
		return n
	}
	T := prefix[n]
	best, bestD := 0, uint64(1<<63)
	for j := 0; j <= n; j++ {
		a, b := prefix[j]*uint64(w), uint64(r)*T
		d := a - b
		if b > a {
			d = b - a
		}
		if d <= bestD {
			best, bestD = j, d
		}
	}
	return best
}

func TestSplitRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for trial := 0; trial < 3000; trial++ {
		n := rng.IntN(12)
		prefix := []uint64{0}
		for i := 0; i < n; i++ {
			prefix = append(prefix, prefix[i]+1+rng.Uint64N(9))
		}
		if n == 0 {
			prefix = []uint64{0}
		}
		w := 1 + rng.IntN(6)
		prev := 0
		for r := 0; r <= w; r++ {
			got := splitBoundary(prefix, w, r)
			if want := bruteBoundary(prefix, w, r); got != want {
				t.Fatalf("prefix %v W=%d r=%d: boundary %d, want %d", prefix, w, r, got, want)
			}
			if got < prev {
				t.Fatalf("prefix %v W=%d: boundaries decrease at r=%d", prefix, w, r)
			}
			prev = got
		}
	}
	// Worked examples from docs/source.md.
	if lo, hi := splitRange([]uint64{0, 5}, 2, 0); lo != 0 || hi != 1 {
		t.Errorf("one sequence, W=2: rank 0 gets [%d,%d), want [0,1)", lo, hi)
	}
	if b := []int{splitBoundary([]uint64{0, 1, 2, 3, 4}, 2, 1), splitBoundary([]uint64{0, 3, 4, 5, 6}, 2, 1)}; !reflect.DeepEqual(b, []int{2, 1}) {
		t.Errorf("boundaries %v, want [2 1]", b)
	}
}

// recordingCorpus remembers which chunks were loaded.
type recordingCorpus struct {
	corpus.Source
	mu     sync.Mutex
	loaded map[int]bool
}

func (r *recordingCorpus) LoadChunk(c int) (*corpus.Chunk, error) {
	r.mu.Lock()
	r.loaded[c] = true
	r.mu.Unlock()
	return r.Source.LoadChunk(c)
}

// TestWorkersUnion checks invariant 6: at every step the ranks' parts, in
// rank order, are exactly the single-worker minibatch (sequences, skipped,
// ids and every stream's data) and every rank
// takes every step, and without prefetch a rank loads only chunks holding its
// own sequences.
func TestWorkersUnion(t *testing.T) {
	for seed := uint64(0); seed < 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 13))
		tc := makeCorpus(t, rng, corpusOpts{n: 1 + rng.IntN(40), oneSample: rng.IntN(3) == 0, chunkSeq: 1 + rng.IntN(5), bad: rng.IntN(2)})
		l := tc.Layout()
		for _, kind := range kinds() {
			cfg := randomConfig(rng, kind)
			cfg.Schedule = randomSchedule(rng, 20)
			cfg.EpochSize = EpochInf
			W := 1 + rng.IntN(6)
			single := mustNew(t, tc, cfg)
			ranks := make([]*Source, W)
			recs := make([]*recordingCorpus, W)
			ownChunks := make([]map[int]bool, W)
			for r := range ranks {
				c := cfg
				c.Workers, c.Rank = W, r
				recs[r] = &recordingCorpus{Source: tc, loaded: map[int]bool{}}
				ranks[r] = mustNew(t, recs[r], c)
				ownChunks[r] = map[int]bool{}
			}
			for step := 0; step < 25; step++ {
				want, err := single.Next()
				if err != nil {
					t.Fatal(err)
				}
				full := append([]int(nil), want.Sequences...)
				for _, sk := range want.Skipped {
					full = append(full, sk.Sequence)
				}
				var union Minibatch
				union.reset(tc.Streams())
				var all []int
				for r, s := range ranks {
					mb, err := s.Next()
					if err != nil {
						t.Fatal(err)
					}
					if !sameHeader(mb, want) {
						t.Fatalf("rank %d step %d: header %+v differs from %+v", r, step, mb, want)
					}
					checkData(t, tc, mb)
					union.Sequences = append(union.Sequences, mb.Sequences...)
					union.IDs = append(union.IDs, mb.IDs...)
					union.Skipped = append(union.Skipped, mb.Skipped...)
					for si := range mb.Streams {
						u, b := &union.Streams[si], &mb.Streams[si]
						u.Dense = append(u.Dense, b.Dense...)
						u.Indices = append(u.Indices, b.Indices...)
						u.Values = append(u.Values, b.Values...)
						base := u.SeqStart[len(u.SeqStart)-1]
						for _, x := range b.SeqStart[1:] {
							u.SeqStart = append(u.SeqStart, base+x)
						}
					}
					for _, o := range mb.Sequences {
						ownChunks[r][l.ChunkOf(o)] = true
					}
					for _, sk := range mb.Skipped {
						ownChunks[r][l.ChunkOf(sk.Sequence)] = true
					}
					all = append(all, mb.Sequences...)
					for _, sk := range mb.Skipped {
						all = append(all, sk.Sequence)
					}
				}
				if !reflect.DeepEqual(union.Sequences, want.Sequences) && !(len(union.Sequences) == 0 && len(want.Sequences) == 0) {
					t.Fatalf("step %d W=%d: union %v, single %v", step, W, union.Sequences, want.Sequences)
				}
				if len(union.Skipped) != len(want.Skipped) || len(all) != len(full) {
					t.Fatalf("step %d: skipped %v vs %v", step, union.Skipped, want.Skipped)
				}
				for si := range want.Streams {
					u, b := union.Streams[si], want.Streams[si]
					if !reflect.DeepEqual(append([]float32{}, u.Dense...), append([]float32{}, b.Dense...)) ||
						!reflect.DeepEqual(append([]int32{}, u.Indices...), append([]int32{}, b.Indices...)) ||
						!reflect.DeepEqual(u.SeqStart, b.SeqStart) {
						t.Fatalf("step %d stream %s: union data differ", step, b.Name)
					}
				}
			}
			for r := range ranks {
				ranks[r].Close() // wait for prefetches before reading recs
				if cfg.Prefetch {
					// Prefetching loads chunks ahead, which may hold none of
					// the rank's sequences (docs/source.md).
					continue
				}
				for c := range recs[r].loaded {
					if !ownChunks[r][c] {
						t.Fatalf("%s W=%d rank %d loaded chunk %d holding none of its sequences", kind, W, r, c)
					}
				}
			}
		}
	}
}

// TestWorkersEmptyGroup: with more ranks than sequences some groups are
// empty, yet every rank takes the step and agrees on the position.
func TestWorkersEmptyGroup(t *testing.T) {
	tc := oneSampleCorpus(t, 5, 2)
	got := make([]int, 3)
	for r := 0; r < 3; r++ {
		cfg := Config{Workers: 3, Rank: r, EpochSize: EpochInf}
		cfg.Randomize.Kind = "none"
		s := mustNew(t, tc, cfg)
		for step := 0; step < 4; step++ {
			mb, err := s.NextK(1)
			if err != nil || mb.Step != uint64(step) || mb.Start != uint64(step) {
				t.Fatalf("rank %d step %d: %+v %v", r, step, mb, err)
			}
			got[r] += len(mb.Sequences)
		}
	}
	// One sequence per step, T=1: b(1) is the boundary closest to 1/3 (0),
	// b(2) the one closest to 2/3 (1), so rank 1 gets it; ranks 0 and 2 are
	// empty.
	if !reflect.DeepEqual(got, []int{0, 4, 0}) {
		t.Errorf("sequences per rank %v, want [0 4 0]", got)
	}
}

// sameHeader tells whether a rank's minibatch a has the single worker's
// step, positions, epoch, sweep and flags (b's).
func sameHeader(a, b *Minibatch) bool {
	return a.Step == b.Step && a.Start == b.Start && a.End == b.End && a.Epoch == b.Epoch &&
		a.Sweep == b.Sweep && a.EndOfSweep == b.EndOfSweep && a.EndOfEpoch == b.EndOfEpoch
}
