package mixture

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/randomize"
	"github.com/batchprep/batchprep/corpus/source"
)

// testCorpus is an in-memory corpus whose data name their corpus, sequence
// and sample, so any delivered sample can be checked.
type testCorpus struct {
	*corpus.Memory
	seqs []corpus.MemorySequence
}

var testStreams = []corpus.Stream{{Name: "x", Dim: 2}, {Name: "y", Dim: 50, Sparse: true}, {Name: "lab", Dim: 1}}

type corpusOpts struct {
	n, maxLen, chunkSeq int
	labels              bool // 0..2 labels per sequence (else 1)
	bad                 int  // malformed sequences
}

func makeCorpus(t testing.TB, rng *rand.Rand, id int, o corpusOpts) *testCorpus {
	t.Helper()
	o.maxLen = max(o.maxLen, 1)
	seqs := make([]corpus.MemorySequence, o.n)
	for i := range seqs {
		n := 1 + rng.IntN(o.maxLen)
		var x, y, lab corpus.MemoryStream
		for j := 0; j < n; j++ {
			x.Dense = append(x.Dense, []float32{float32(id*1000 + i), float32(j)})
			var e []corpus.SparseEntry
			for k := rng.IntN(3); k > 0; k-- {
				e = append(e, corpus.SparseEntry{Index: int32(rng.IntN(50)), Value: float32(id*1000+i) + float32(k)/4})
			}
			y.Sparse = append(y.Sparse, e)
		}
		nl := 1
		if o.labels {
			nl = rng.IntN(3)
		}
		for j := 0; j < nl; j++ {
			lab.Dense = append(lab.Dense, []float32{float32(i)})
		}
		seqs[i] = corpus.MemorySequence{ID: fmt.Sprintf("c%d-%d", id, i), Streams: []corpus.MemoryStream{x, y, lab}}
	}
	for k := 0; k < o.bad; k++ {
		i := rng.IntN(o.n)
		seqs[i].Err = fmt.Errorf("corpus %d line %d: bad value", id, i)
	}
	cfg := corpus.MemoryConfig{ChunkSequences: max(o.chunkSeq, 1), DefinesMBSize: "x"}
	if o.labels {
		cfg.Label = "lab"
	}
	m, err := corpus.NewMemory(testStreams, seqs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &testCorpus{m, seqs}
}

// randomMixture draws 1..4 corpora of random sizes, sequence lengths and
// weights (decimals or sample counts).
func randomMixture(t testing.TB, rng *rand.Rand, labels bool) ([]*testCorpus, []Corpus) {
	K := 1 + rng.IntN(4)
	counts := rng.IntN(2) == 0
	var tcs []*testCorpus
	var cs []Corpus
	for k := 0; k < K; k++ {
		tc := makeCorpus(t, rng, k, corpusOpts{n: 1 + rng.IntN(40), maxLen: 1 + rng.IntN(9), chunkSeq: 1 + rng.IntN(5), labels: labels})
		w := Weight{Num: 1 + rng.Uint64N(20), Den: 1}
		if counts {
			w = Weight{Num: 1 + rng.Uint64N(1000), Den: 1, Samples: true}
		} else if rng.IntN(2) == 0 {
			w.Den = 10
		}
		tcs = append(tcs, tc)
		cs = append(cs, Corpus{Source: tc, Weight: w, Name: "m" + strconv.Itoa(k)})
	}
	return tcs, cs
}

func randomConfig(rng *rand.Rand) source.Config {
	kinds := []string{"none", "cntk", "window"}
	c := source.Config{Randomize: randomize.Config{Kind: kinds[rng.IntN(3)], Seed: rng.Uint64N(1000)}}
	if rng.IntN(2) == 0 {
		c.Randomize.WindowChunks = 1 + rng.IntN(4)
	} else {
		c.Randomize.WindowSamples = 1 + rng.Uint64N(40)
	}
	c.Prefetch = rng.IntN(2) == 0
	if c.Prefetch {
		c.PrefetchChunks = rng.IntN(5)
	}
	return c
}

func mustNew(t testing.TB, cs []Corpus, cfg source.Config) *Mixture {
	t.Helper()
	m, err := New(cs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// seqRef is one delivered sequence: its corpus and ordinal.
type seqRef struct{ corpus, ord int }

// mbCopy is what tests compare of a minibatch.
type mbCopy struct {
	step              uint64
	epoch             int
	sweep, start, end uint64
	eos, eoe          bool
	seqs, skipped     []seqRef
	ids               []string
	samples           []uint64
	dense             [][]float32
}

func copyMB(mb *Minibatch) mbCopy {
	c := mbCopy{step: mb.Step, epoch: mb.Epoch, sweep: mb.Sweep, start: mb.Start, end: mb.End,
		eos: mb.EndOfSweep, eoe: mb.EndOfEpoch, ids: slices.Clone(mb.IDs), samples: slices.Clone(mb.CorpusSamples)}
	for i, o := range mb.Sequences {
		c.seqs = append(c.seqs, seqRef{mb.Corpus[i], o})
	}
	for i, s := range mb.Skipped {
		c.skipped = append(c.skipped, seqRef{mb.SkippedCorpus[i], s.Sequence})
	}
	for _, b := range mb.Streams {
		c.dense = append(c.dense, slices.Clone(b.Dense))
	}
	return c
}

func equalMB(a, b mbCopy) bool {
	return a.step == b.step && a.epoch == b.epoch && a.sweep == b.sweep && a.start == b.start && a.end == b.end &&
		a.eos == b.eos && a.eoe == b.eoe && slices.Equal(a.seqs, b.seqs) && slices.Equal(a.skipped, b.skipped) &&
		slices.Equal(a.ids, b.ids) && slices.Equal(a.samples, b.samples) &&
		slices.EqualFunc(a.dense, b.dense, func(x, y []float32) bool { return slices.Equal(x, y) })
}

// checkData verifies that every delivered sequence carries exactly its own
// data from its corpus, per stream.
func checkData(t testing.TB, tcs []*testCorpus, mb *Minibatch) {
	t.Helper()
	for i, sk := range mb.Skipped {
		want := tcs[mb.SkippedCorpus[i]].seqs[sk.Sequence].Err
		if want == nil || !errors.Is(sk.Err, want) {
			t.Fatalf("step %d: sequence %d of corpus %d skipped with %v", mb.Step, sk.Sequence, mb.SkippedCorpus[i], sk.Err)
		}
	}
	for i, ord := range mb.Sequences {
		sq := tcs[mb.Corpus[i]].seqs[ord]
		if sq.Err != nil || mb.IDs[i] != sq.ID {
			t.Fatalf("step %d: sequence %d: id %q, want %q (err %v)", mb.Step, i, mb.IDs[i], sq.ID, sq.Err)
		}
		for s, b := range mb.Streams {
			ms := sq.Streams[s]
			lo, hi := int(b.SeqStart[i]), int(b.SeqStart[i+1])
			if b.Sparse {
				if hi-lo != len(ms.Sparse) {
					t.Fatalf("step %d seq %s stream %s: %d samples, want %d", mb.Step, sq.ID, b.Name, hi-lo, len(ms.Sparse))
				}
				for j := lo; j < hi; j++ {
					want := ms.Sparse[j-lo]
					r0, r1 := b.RowStart[j], b.RowStart[j+1]
					if int(r1-r0) != len(want) {
						t.Fatalf("step %d seq %s sample %d: %d entries, want %d", mb.Step, sq.ID, j-lo, r1-r0, len(want))
					}
					for k, e := range want {
						if b.Indices[int(r0)+k] != e.Index || b.Values[int(r0)+k] != e.Value {
							t.Fatalf("step %d seq %s sample %d entry %d differs", mb.Step, sq.ID, j-lo, k)
						}
					}
				}
				continue
			}
			if hi-lo != len(ms.Dense) {
				t.Fatalf("step %d seq %s stream %s: %d samples, want %d", mb.Step, sq.ID, b.Name, hi-lo, len(ms.Dense))
			}
			for j := lo; j < hi; j++ {
				for d := 0; d < b.Dim; d++ {
					if b.Dense[j*b.Dim+d] != ms.Dense[j-lo][d] {
						t.Fatalf("step %d seq %s stream %s sample %d differs", mb.Step, sq.ID, b.Name, j-lo)
					}
				}
			}
		}
	}
}
