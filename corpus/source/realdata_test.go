package source

import (
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/internal/shared"
)

// TestATISSweeps reads ATIS (4,978 sequences, 66,547 lines, three sparse
// streams) through the CTF reader with every randomizer, small chunks and
// two ranks: each sweep delivers every sequence once with its own data and
// ids, the ranks' union is the single-worker minibatch, and the intent
// stream S1 (first line only) has one sample per sequence.
func TestATISSweeps(t *testing.T) {
	p := shared.Need(t, "ctf", "atis", "atis.train.ctf")
	streams := []corpus.Stream{{Name: "S0", Dim: 943, Sparse: true}, {Name: "S1", Dim: 26, Sparse: true}, {Name: "S2", Dim: 129, Sparse: true}}
	r, err := ctf.Open(p, ctf.Config{Streams: streams, ChunkBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	l := r.Layout()
	if l.NumSequences() != 4978 || l.TotalSamples() != 66547 {
		t.Fatalf("ATIS: %d sequences, %d samples", l.NumSequences(), l.TotalSamples())
	}
	for _, kind := range kinds() {
		cfg := Config{Schedule: ConstantSchedule(1000)}
		cfg.Randomize.Kind, cfg.Randomize.WindowChunks = kind, 4
		single := mustNew(t, r, cfg)
		cfg.Workers = 2
		r0 := mustNew(t, r, cfg)
		cfg.Rank = 1
		r1 := mustNew(t, r, cfg)
		seen := make([]int, l.NumSequences())
		for single.Epoch() < 1 {
			mb, err := single.Next()
			if err != nil {
				t.Fatal(err)
			}
			a, err := r0.Next()
			if err != nil {
				t.Fatal(err)
			}
			n0 := len(a.Sequences)
			u := append([]int(nil), a.Sequences...)
			b, err := r1.Next()
			if err != nil {
				t.Fatal(err)
			}
			u = append(u, b.Sequences...)
			if len(u) != len(mb.Sequences) || b.Start != mb.Start || a.End != mb.End {
				t.Fatalf("%s step %d: ranks %d+%d sequences, single %d", kind, mb.Step, n0, len(b.Sequences), len(mb.Sequences))
			}
			for i, o := range mb.Sequences {
				if u[i] != o {
					t.Fatalf("%s step %d: union differs at %d", kind, mb.Step, i)
				}
				seen[o]++
				if mb.Streams[1].SequenceSamples(i) != 1 || mb.Streams[0].SequenceSamples(i) != int(l.Samples[o]) {
					t.Fatalf("%s: sequence %d: S0 %d S1 %d samples", kind, o, mb.Streams[0].SequenceSamples(i), mb.Streams[1].SequenceSamples(i))
				}
			}
		}
		for o, n := range seen {
			if n != 1 {
				t.Fatalf("%s: sequence %d seen %d times in one sweep", kind, o, n)
			}
		}
	}
}
