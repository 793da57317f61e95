package source

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/randomize"
)

// testCorpus is a random in-memory corpus whose data encode where they came
// from, so any delivered sample can be checked.
type testCorpus struct {
	*corpus.Memory
	seqs []corpus.MemorySequence
}

type corpusOpts struct {
	n         int  // sequences
	oneSample bool // every sequence has one sample
	maxLen    int  // longest sequence (default 5)
	chunkSeq  int  // sequences per chunk
	labels    bool // a label stream with 0..2 labels per sequence
	bad       int  // this many random sequences are malformed
}

var testStreams = []corpus.Stream{{Name: "x", Dim: 2}, {Name: "y", Dim: 50, Sparse: true}, {Name: "lab", Dim: 1}}

func makeCorpus(t testing.TB, rng *rand.Rand, o corpusOpts) *testCorpus {
	t.Helper()
	if o.maxLen == 0 {
		o.maxLen = 5
	}
	seqs := make([]corpus.MemorySequence, o.n)
	for i := range seqs {
		n := 1
		if !o.oneSample {
			n = 1 + rng.IntN(o.maxLen)
		}
		var x corpus.MemoryStream
		var y corpus.MemoryStream
		for j := 0; j < n; j++ {
			x.Dense = append(x.Dense, []float32{float32(i), float32(j)})
			var e []corpus.SparseEntry
			for k := rng.IntN(3); k > 0; k-- {
				e = append(e, corpus.SparseEntry{Index: int32(rng.IntN(50)), Value: float32(i) + float32(k)/4})
			}
			y.Sparse = append(y.Sparse, e)
		}
		var lab corpus.MemoryStream
		nl := 1
		if o.labels {
			nl = rng.IntN(3)
		}
		for j := 0; j < nl; j++ {
			lab.Dense = append(lab.Dense, []float32{float32(i)})
		}
		seqs[i] = corpus.MemorySequence{ID: "s" + strconv.Itoa(i), Streams: []corpus.MemoryStream{x, y, lab}}
	}
	for k := 0; k < o.bad; k++ {
		i := rng.IntN(o.n)
		seqs[i].Err = fmt.Errorf("line %d: column 3: bad value", i)
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

// kinds lists the randomizer kinds that are implemented so far; the property
// tests run over all of them.
func kinds() []string {
	l := &corpus.Layout{ChunkStart: []int{0, 1, 2}, Samples: []uint32{1, 1}}
	out := []string{"none"}
	for _, k := range []string{"cntk", "window"} {
		if _, err := randomize.New(randomize.Config{Kind: k, WindowChunks: 2}, l); err == nil {
			out = append(out, k)
		}
	}
	return out
}

// randomConfig draws a randomizer setup for kind, with or without prefetch.
func randomConfig(rng *rand.Rand, kind string) Config {
	c := Config{Randomize: randomize.Config{Kind: kind, Seed: rng.Uint64N(1000)}}
	if rng.IntN(2) == 0 {
		c.Randomize.WindowChunks = 1 + rng.IntN(4)
	} else {
		c.Randomize.WindowSamples = 1 + rng.Uint64N(40)
	}
	// Half the property tests run with prefetching (parallel window loads,
	// file-order lookahead), which must never change what is delivered.
	c.Prefetch = rng.IntN(2) == 0
	if c.Prefetch {
		c.PrefetchChunks = rng.IntN(5) // the next window's chunks, ahead
	}
	return c
}

func mustNew(t testing.TB, src corpus.Source, cfg Config) *Source {
	t.Helper()
	s, err := New(src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// cloneMB deep-copies a minibatch so it survives the next call.
func cloneMB(m *Minibatch) Minibatch {
	c := *m
	c.Sequences = append([]int(nil), m.Sequences...)
	c.IDs = append([]string(nil), m.IDs...)
	c.Skipped = append([]Skipped(nil), m.Skipped...)
	c.Streams = make([]StreamBatch, len(m.Streams))
	for i, b := range m.Streams {
		c.Streams[i] = StreamBatch{Stream: b.Stream,
			SeqStart: append([]int32(nil), b.SeqStart...), Dense: append([]float32(nil), b.Dense...),
			RowStart: append([]int32(nil), b.RowStart...), Indices: append([]int32(nil), b.Indices...),
			Values: append([]float32(nil), b.Values...)}
	}
	return c
}

// readN reads n minibatches with Next (sizes from the schedule).
func readN(t testing.TB, s *Source, n int) []Minibatch {
	t.Helper()
	out := make([]Minibatch, 0, n)
	for i := 0; i < n; i++ {
		mb, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, cloneMB(mb))
	}
	return out
}

// timelineOrder materializes the randomizer's order for sweeps [0, sweeps).
func timelineOrder(t testing.TB, l *corpus.Layout, cfg randomize.Config, sweeps int) [][]int {
	t.Helper()
	r, err := randomize.New(cfg, l)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]int, sweeps)
	for s := range out {
		c, _ := r.Sweep(uint64(s)).Seek(0)
		for {
			o, ok := c.Next()
			if !ok {
				break
			}
			out[s] = append(out[s], o)
		}
	}
	return out
}

// checkData verifies that every delivered sequence carries exactly its own
// data from the corpus, per stream, and that skipped ones are the bad ones.
func checkData(t testing.TB, tc *testCorpus, mb *Minibatch) {
	t.Helper()
	for _, sk := range mb.Skipped {
		if tc.seqs[sk.Sequence].Err == nil || !errors.Is(sk.Err, tc.seqs[sk.Sequence].Err) {
			t.Fatalf("step %d: sequence %d skipped with %v, corpus error %v", mb.Step, sk.Sequence, sk.Err, tc.seqs[sk.Sequence].Err)
		}
	}
	for i, ord := range mb.Sequences {
		sq := tc.seqs[ord]
		if sq.Err != nil {
			t.Fatalf("step %d: bad sequence %d delivered", mb.Step, ord)
		}
		if mb.IDs[i] != sq.ID {
			t.Fatalf("step %d: id %q for sequence %d, want %q", mb.Step, mb.IDs[i], ord, sq.ID)
		}
		for s, b := range mb.Streams {
			ms := sq.Streams[s]
			lo, hi := int(b.SeqStart[i]), int(b.SeqStart[i+1])
			if b.Sparse {
				if hi-lo != len(ms.Sparse) {
					t.Fatalf("step %d seq %d stream %s: %d samples, want %d", mb.Step, ord, b.Name, hi-lo, len(ms.Sparse))
				}
				for j := lo; j < hi; j++ {
					want := ms.Sparse[j-lo]
					r0, r1 := b.RowStart[j], b.RowStart[j+1]
					if int(r1-r0) != len(want) {
						t.Fatalf("step %d seq %d sample %d: %d entries, want %d", mb.Step, ord, j-lo, r1-r0, len(want))
					}
					for k, e := range want {
						if b.Indices[int(r0)+k] != e.Index || b.Values[int(r0)+k] != e.Value {
							t.Fatalf("step %d seq %d sample %d entry %d differs", mb.Step, ord, j-lo, k)
						}
					}
				}
				continue
			}
			if hi-lo != len(ms.Dense) {
				t.Fatalf("step %d seq %d stream %s: %d samples, want %d", mb.Step, ord, b.Name, hi-lo, len(ms.Dense))
			}
			for j := lo; j < hi; j++ {
				for d := 0; d < b.Dim; d++ {
					if b.Dense[j*b.Dim+d] != ms.Dense[j-lo][d] {
						t.Fatalf("step %d seq %d stream %s sample %d differs", mb.Step, ord, b.Name, j-lo)
					}
				}
			}
		}
	}
}

func randomizeKind(k string) randomize.Config { return randomize.Config{Kind: k} }
func randomizeWindow(w int) randomize.Config {
	return randomize.Config{Kind: "window", WindowChunks: w}
}
