package source

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/randomize"
)

// TestChunkFinder checks the O(1) chunk lookup against the binary search of
// corpus.Layout on even, ragged and very skewed chunkings.
func TestChunkFinder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 300; trial++ {
		l := &corpus.Layout{ChunkStart: []int{0}}
		nc := 1 + rng.IntN(40)
		for c := 0; c < nc; c++ {
			size := 1 + rng.IntN(8)
			switch trial % 3 {
			case 1:
				size = 64
			case 2: // a few huge chunks among tiny ones
				if rng.IntN(5) == 0 {
					size = 1 + rng.IntN(2000)
				}
			}
			l.ChunkStart = append(l.ChunkStart, l.ChunkStart[c]+size)
		}
		l.Samples = make([]uint32, l.ChunkStart[nc])
		f := newChunkFinder(l)
		if len(f.table) > 2*nc+2 {
			t.Fatalf("trial %d: table of %d entries for %d chunks", trial, len(f.table), nc)
		}
		for q := range l.Samples {
			if got, want := f.find(q), l.ChunkOf(q); got != want {
				t.Fatalf("trial %d: find(%d) = %d, want %d (chunks %v)", trial, q, got, want, l.ChunkStart)
			}
		}
	}
}

// mixedCorpus has chunks where every sequence has one sample and chunks
// where some have several (or none in the optional stream z), and chunks
// where every sample of the sparse stream y has one entry and chunks where
// samples have 0-2, chunks where y's values are all 1 and chunks where they
// are not, so every assembly path and their mixture within one
// segment are exercised.
func mixedCorpus(t testing.TB, rng *rand.Rand, n, chunkSeq int) *testCorpus {
	streams := []corpus.Stream{{Name: "x", Dim: 3}, {Name: "y", Dim: 20, Sparse: true}, {Name: "z", Dim: 1}}
	seqs := make([]corpus.MemorySequence, n)
	for i := range seqs {
		samples := 1
		if (i/chunkSeq)%2 == 1 && rng.IntN(3) == 0 {
			samples = 2 + rng.IntN(3)
		}
		var x, y, z corpus.MemoryStream
		for j := 0; j < samples; j++ {
			x.Dense = append(x.Dense, []float32{float32(i), float32(j), -1})
			var e []corpus.SparseEntry
			k := rng.IntN(3)
			if (i/chunkSeq)%3 == 2 {
				k = 1 // chunks with one entry per sample (gather.single)
			}
			for ; k > 0; k-- {
				v := float32(i) + float32(k)
				if (i/chunkSeq)%2 == 0 {
					v = 1 // chunks whose values are all 1 (gather.ones)
				}
				e = append(e, corpus.SparseEntry{Index: int32(rng.IntN(20)), Value: v})
			}
			y.Sparse = append(y.Sparse, e)
		}
		if samples == 1 || rng.IntN(2) == 0 {
			z.Dense = [][]float32{{float32(i)}}
		}
		seqs[i] = corpus.MemorySequence{ID: "m" + strconv.Itoa(i), Streams: []corpus.MemoryStream{x, y, z}}
		if rng.IntN(40) == 0 {
			seqs[i].Err = errBadTest(i)
		}
	}
	m, err := corpus.NewMemory(streams, seqs, corpus.MemoryConfig{ChunkSequences: chunkSeq, DefinesMBSize: "x"})
	if err != nil {
		t.Fatal(err)
	}
	return &testCorpus{m, seqs}
}

type errBadTest int

func (e errBadTest) Error() string { return "line " + strconv.Itoa(int(e)) + ": bad" }

// TestGatherMatchesReference: the batched assembly delivers exactly what
// copying one sequence at a time delivers, for any list of ordinals (with
// repeats, across any number of chunks), lists bad sequences in order
// (invariant 10), and never pins more chunks than the cache holds
// (invariant 9).
func TestGatherMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 60; trial++ {
		chunkSeq := 1 + rng.IntN(9)
		tc := mixedCorpus(t, rng, 20+rng.IntN(200), chunkSeq)
		s := mustNew(t, tc, Config{EpochSize: EpochInf, Randomize: randomize.Config{Kind: "window", WindowChunks: 1 + rng.IntN(3)}})
		for rep := 0; rep < 5; rep++ {
			ords := make([]int, rng.IntN(300))
			for i := range ords {
				ords[i] = rng.IntN(tc.Layout().NumSequences())
			}
			// Half the lists come with each sequence's rank in sweep 0's
			// visit order, as the window cursor gives them, the others
			// without (-1): an arranged chunk is read at the rank, or
			// through its arrangement's lookup.
			at := make([]seqAt, len(ords))
			vo := s.rnd.(randomize.VisitOrder)
			for i, ord := range ords {
				at[i].rank = -1
				if rep%2 == 0 {
					c := tc.Layout().ChunkOf(ord)
					first, _ := tc.Layout().Chunk(c)
					at[i].rank = int32(slices.Index(vo.Visits(0, c), int32(ord-first)))
				}
			}
			var got Minibatch
			got.reset(tc.Streams())
			if err := s.assemble(&got, ords, at); err != nil {
				t.Fatal(err)
			}
			var want Minibatch
			want.reset(tc.Streams())
			for _, ord := range ords {
				c := tc.Layout().ChunkOf(ord)
				ch, err := tc.LoadChunk(c)
				if err != nil {
					t.Fatal(err)
				}
				i := ord - ch.First
				if ch.BadAt(i) != nil {
					want.Skipped = append(want.Skipped, Skipped{Sequence: ord, Err: ch.BadAt(i)})
					continue
				}
				want.appendSequence(ch, i)
			}
			checkData(t, tc, &got)
			if !reflect.DeepEqual(cloneMB(&got), cloneMB(&want)) {
				t.Fatalf("trial %d rep %d: batched assembly differs from the reference\ngot  %+v\nwant %+v", trial, rep, got, want)
			}
			if s.gather.maxPins > s.cache.cap {
				t.Fatalf("trial %d: %d chunks pinned at once, cache holds %d", trial, s.gather.maxPins, s.cache.cap)
			}
			for c, p := range s.gather.slot {
				if p != -1 {
					t.Fatalf("chunk %d still pinned after assembly", c)
				}
			}
		}
	}
}

// appendSequence copies sequence i (chunk-relative) of chunk c, one at a
// time: the reference the batched assembly is checked against.
func (m *Minibatch) appendSequence(c *corpus.Chunk, i int) {
	m.Sequences = append(m.Sequences, c.First+i)
	m.IDs = append(m.IDs, c.IDs[i])
	for s := range m.Streams {
		b := &m.Streams[s]
		d := &c.Streams[s]
		lo, hi := d.SeqStart[i], d.SeqStart[i+1]
		if b.Sparse {
			base := d.RowStart[lo]
			off := int32(len(b.Indices)) - base
			for j := lo + 1; j <= hi; j++ {
				b.RowStart = append(b.RowStart, d.RowStart[j]+off)
			}
			b.Indices = append(b.Indices, d.Indices[base:d.RowStart[hi]]...)
			b.Values = append(b.Values, d.Values[base:d.RowStart[hi]]...)
		} else {
			dim := int32(b.Dim)
			b.Dense = append(b.Dense, d.Dense[lo*dim:hi*dim]...)
		}
		b.SeqStart = append(b.SeqStart, b.SeqStart[len(b.SeqStart)-1]+(hi-lo))
	}
}
