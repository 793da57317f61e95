package mixture

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/batchprep/batchprep/corpus/randomize"
	"github.com/batchprep/batchprep/corpus/source"
)

// TestSplitChunks: with SplitChunks, for W = 1..4, rank r gets exactly the
// sequences of each single-worker step whose chunks it owns (chunk c of
// corpus k is rank (c+k) mod W's), in the step's order, with their own data;
// a state taken by one rank resumes on another W with the same rule.
func TestSplitChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 4))
	for trial := 0; trial < 15; trial++ {
		tcs, cs := randomMixture(t, rng, false)
		cfg := randomConfig(rng)
		if cfg.Randomize.Kind == "none" {
			cfg.Randomize.Kind = "window"
		}
		cfg.Schedule = source.ConstantSchedule(1 + rng.IntN(25))
		single := mustNew(t, cs, cfg)
		var want []mbCopy
		for i := 0; i < 30; i++ {
			mb, err := single.Next()
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, copyMB(mb))
		}
		owned := func(i, w, r int) []seqRef {
			var out []seqRef
			for _, s := range want[i].seqs {
				if (tcs[s.corpus].Layout().ChunkOf(s.ord)+s.corpus)%w == r {
					out = append(out, s)
				}
			}
			return out
		}
		for W := 1; W <= 4; W++ {
			at := rng.IntN(len(want))
			var st State
			for r := 0; r < W; r++ {
				c := cfg
				c.Workers, c.Rank, c.SplitChunks = W, r, true
				m := mustNew(t, cs, c)
				for i := range want {
					mb, err := m.Next()
					if err != nil {
						t.Fatal(err)
					}
					checkData(t, tcs, mb)
					got := copyMB(mb)
					if got.start != want[i].start || got.end != want[i].end || got.step != want[i].step || !slices.Equal(got.samples, want[i].samples) {
						t.Fatalf("trial %d W=%d rank %d step %d: header %+v, want %+v", trial, W, r, i, got, want[i])
					}
					if o := owned(i, W, r); !slices.Equal(got.seqs, o) {
						t.Fatalf("trial %d W=%d rank %d step %d: %v, want %v (single %v)", trial, W, r, i, got.seqs, o, want[i].seqs)
					}
					if i+1 == at && r == W-1 {
						st = m.State()
					}
				}
			}
			if at == 0 {
				continue
			}
			w2 := 1 + rng.IntN(4)
			for r := 0; r < w2; r++ {
				c := cfg
				c.Workers, c.Rank, c.SplitChunks = w2, r, true
				m := mustNew(t, cs, c)
				if err := m.Restore(st); err != nil {
					t.Fatal(err)
				}
				for i := at; i < len(want); i++ {
					mb, err := m.Next()
					if err != nil {
						t.Fatal(err)
					}
					if got, o := copyMB(mb).seqs, owned(i, w2, r); !slices.Equal(got, o) {
						t.Fatalf("trial %d: resumed at step %d, W %d -> %d, rank %d step %d: %v, want %v", trial, at, W, w2, r, i, got, o)
					}
				}
			}
		}
	}
}

// TestSplitChunksNoChunks: a rank that owns no chunk of any corpus is
// refused (corpus k's chunk 0 is rank k mod W's); one that owns a chunk of
// one corpus is not.
func TestSplitChunksNoChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	var cs []Corpus
	for k := range 2 { // one chunk each: ranks 0 and 1 own one
		tc := makeCorpus(t, rng, k, corpusOpts{n: 3, maxLen: 2, chunkSeq: 3})
		cs = append(cs, Corpus{Source: tc, Weight: Weight{Num: 1, Den: 1}, Name: fmt.Sprint("m", k)})
	}
	cfg := source.Config{Randomize: randomize.Config{Kind: "window"}, Workers: 4, SplitChunks: true}
	for r, owns := range []bool{true, true, false, false} {
		cfg.Rank = r
		m, err := New(cs, cfg)
		if owns != (err == nil) || (!owns && !errors.Is(err, source.ErrNoChunks)) {
			t.Errorf("rank %d of 4 over 2 one-chunk corpora: %v", r, err)
		}
		if m != nil {
			m.Close()
		}
	}
}
