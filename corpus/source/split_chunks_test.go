package source

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus/randomize"
)

// ownedPart is the part of the single-worker minibatch mb that rank r of w
// owns under SplitChunks with shift: its sequences and skipped sequences
// whose chunks are r's, in timeline order.
func ownedPart(tc *testCorpus, mb *Minibatch, w, r, shift int) (seqs, skipped []int) {
	l := tc.Layout()
	for _, o := range mb.Sequences {
		if (l.ChunkOf(o)+shift)%w == r {
			seqs = append(seqs, o)
		}
	}
	for _, sk := range mb.Skipped {
		if (l.ChunkOf(sk.Sequence)+shift)%w == r {
			skipped = append(skipped, sk.Sequence)
		}
	}
	return seqs, skipped
}

// TestSplitChunks: with SplitChunks every rank takes every step at the
// single worker's position, gets exactly the sequences of that step's
// minibatch whose chunks it owns (so the ranks' parts are disjoint and
// cover it), and loads or queues only its own chunks, prefetching included.
func TestSplitChunks(t *testing.T) {
	for seed := uint64(0); seed < 30; seed++ {
		rng := rand.New(rand.NewPCG(seed, 31))
		tc := makeCorpus(t, rng, corpusOpts{n: 1 + rng.IntN(60), oneSample: rng.IntN(3) == 0, chunkSeq: 1 + rng.IntN(5), bad: rng.IntN(2)})
		for _, kind := range []string{"cntk", "window"} {
			cfg := randomConfig(rng, kind)
			cfg.Schedule = randomSchedule(rng, 20)
			cfg.EpochSize = EpochInf
			W, shift := 1+rng.IntN(5), rng.IntN(3)
			single := mustNew(t, tc, cfg)
			ranks := make([]*Source, W)
			recs := make([]*recordingCorpus, W)
			for r := range ranks {
				c := cfg
				c.Workers, c.Rank, c.SplitChunks, c.ChunkShift = W, r, true, shift
				c.AllowNoChunks = true // tiny corpora: some ranks own nothing
				recs[r] = &recordingCorpus{Source: tc, loaded: map[int]bool{}}
				ranks[r] = mustNew(t, recs[r], c)
			}
			for step := 0; step < 25; step++ {
				want, err := single.Next()
				if err != nil {
					t.Fatal(err)
				}
				got := 0
				for r, s := range ranks {
					mb, err := s.Next()
					if err != nil {
						t.Fatal(err)
					}
					if !sameHeader(mb, want) {
						t.Fatalf("rank %d step %d: header %+v differs from %+v", r, step, mb, want)
					}
					checkData(t, tc, mb)
					seqs, skipped := ownedPart(tc, want, W, r, shift)
					var gotSkipped []int
					for _, sk := range mb.Skipped {
						gotSkipped = append(gotSkipped, sk.Sequence)
					}
					if !slices.Equal(mb.Sequences, seqs) || !slices.Equal(gotSkipped, skipped) {
						t.Fatalf("seed %d %s W=%d rank %d step %d: sequences %v skipped %v, want %v %v (single %v)",
							seed, kind, W, r, step, mb.Sequences, gotSkipped, seqs, skipped, want.Sequences)
					}
					got += len(mb.Sequences) + len(mb.Skipped)
					if c, ok := foreignEntry(s, W, r, shift); ok {
						t.Fatalf("seed %d %s W=%d rank %d step %d: chunk %d, rank %d's, is in the cache (loaded or queued)", seed, kind, W, r, step, c, (c+shift)%W)
					}
				}
				if got != len(want.Sequences)+len(want.Skipped) {
					t.Fatalf("step %d: the ranks got %d sequences, the single worker %d", step, got, len(want.Sequences)+len(want.Skipped))
				}
			}
			for r := range ranks {
				ranks[r].Close() // wait for prefetches before reading recs
				for c := range recs[r].loaded {
					if (c+shift)%W != r {
						t.Fatalf("seed %d %s W=%d rank %d (prefetch %v) loaded chunk %d, rank %d's", seed, kind, W, r, cfg.Prefetch, c, (c+shift)%W)
					}
				}
			}
		}
	}
}

// foreignEntry returns a chunk of another rank that s's cache holds or has
// queued for loading, if any.
func foreignEntry(s *Source, w, r, shift int) (int, bool) {
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	for c, e := range s.cache.slots {
		if e != nil && (c+shift)%w != r {
			return c, true
		}
	}
	return 0, false
}

// TestSplitChunksResume: a state taken from any rank after any step, resumed
// with another number of ranks (elastic), gives each new rank its owned
// part of the single worker's minibatches from there on.
func TestSplitChunksResume(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	tc := makeCorpus(t, rng, corpusOpts{n: 80, chunkSeq: 3})
	cfg := Config{Randomize: randomize.Config{Kind: "window", Seed: 3, WindowChunks: 4}, EpochSize: EpochInf, Prefetch: true, PrefetchChunks: 2}
	cfg.Schedule = ConstantSchedule(17)
	single := mustNew(t, tc, cfg)
	want := readN(t, single, 40)
	for trial := 0; trial < 10; trial++ {
		at := rng.IntN(30)
		w1, w2 := 2+rng.IntN(3), 1+rng.IntN(4)
		c := cfg
		c.Workers, c.Rank, c.SplitChunks = w1, rng.IntN(w1), true
		first := mustNew(t, tc, c)
		readN(t, first, at)
		st := first.State()
		for r := 0; r < w2; r++ {
			c := cfg
			c.Workers, c.Rank, c.SplitChunks = w2, r, true
			s := mustNew(t, tc, c)
			if err := s.Restore(st); err != nil {
				t.Fatal(err)
			}
			for i, mb := range readN(t, s, 40-at) {
				seqs, _ := ownedPart(tc, &want[at+i], w2, r, 0)
				if mb.Start != want[at+i].Start || !slices.Equal(mb.Sequences, seqs) {
					t.Fatalf("W %d -> %d, rank %d, step %d after a resume at %d: %v, want %v", w1, w2, r, i, at, mb.Sequences, seqs)
				}
			}
		}
	}
}

func TestSplitChunksRefusesFileOrder(t *testing.T) {
	c := Config{Randomize: randomize.Config{Kind: "none"}, Workers: 2, SplitChunks: true}
	if err := c.Validate(); !errors.Is(err, ErrSplitFileOrder) {
		t.Errorf("split by chunks in file order: %v, want ErrSplitFileOrder", err)
	}
}

// TestSplitChunksOwnsChunks: OwnsChunks is the rule written out (some
// chunk c < n with (c+shift) mod W = rank), and New refuses a rank that
// owns no chunk unless AllowNoChunks.
func TestSplitChunksOwnsChunks(t *testing.T) {
	for w := 1; w <= 5; w++ {
		for shift := 0; shift < 7; shift++ {
			for r := 0; r < w; r++ {
				for n := 1; n <= 7; n++ {
					c := Config{Workers: w, Rank: r, SplitChunks: true, ChunkShift: shift}
					want := false
					for ch := 0; ch < n; ch++ {
						want = want || (ch+shift)%w == r
					}
					if got := c.OwnsChunks(n); got != want {
						t.Fatalf("W=%d shift %d rank %d, %d chunks: OwnsChunks %v, want %v", w, shift, r, n, got, want)
					}
				}
			}
		}
	}
	tc := oneSampleCorpus(t, 6, 2) // 3 chunks
	cfg := Config{Randomize: randomize.Config{Kind: "window"}, Workers: 4, Rank: 3, SplitChunks: true}
	if _, err := New(tc, cfg); !errors.Is(err, ErrNoChunks) || !strings.HasSuffix(err.Error(), "rank 3 of 4, 3 chunks") {
		t.Errorf("rank 3 of 4 over 3 chunks: %v, want ErrNoChunks naming the rank and the chunks", err)
	}
	if _, err := New(oneSampleCorpus(t, 2, 2), Config{Randomize: randomize.Config{Kind: "window"}, Workers: 2, Rank: 1, SplitChunks: true}); err == nil || !strings.HasSuffix(err.Error(), "rank 1 of 2, 1 chunk") {
		t.Errorf("rank 1 of 2 over 1 chunk: %v", err)
	}
	cfg.AllowNoChunks = true
	s := mustNew(t, tc, cfg)
	if mb, err := s.Next(); err != nil || len(mb.Sequences) != 0 || mb.End == 0 {
		t.Errorf("an idle rank's step: %+v, %v", mb, err)
	}
}
