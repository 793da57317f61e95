package serve

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/randomize"
	"github.com/batchprep/batchprep/corpus/source"
)

// TestStateEncoder: the states of invariant 2 are byte for byte those of
// source.EncodeState, after every minibatch of several setups (epoch sizes
// in label samples, schedules, k, a restore).
func TestStateEncoder(t *testing.T) {
	var b bytes.Buffer
	for i := range 40 {
		for j := range 1 + i%3 {
			fmt.Fprintf(&b, "%d |x %d |y %d:1\n", i, j, (i+j)%5)
		}
	}
	file := filepath.Join(t.TempDir(), "c.ctf")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ctf.Open(file, ctf.Config{Streams: []corpus.Stream{{Name: "x", Dim: 1}, {Name: "y", Dim: 5, Sparse: true}}, ChunkSequences: 4, Label: "y"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sched, err := source.ParseSchedule("3*2:7")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cfg source.Config
		k   int
	}{
		{source.Config{Randomize: randomize.Config{Kind: "window", WindowChunks: 3, Seed: 4}, Schedule: sched}, 0},
		{source.Config{Randomize: randomize.Config{Kind: "cntk", WindowChunks: 2}, EpochSize: 17}, 0},
		{source.Config{Randomize: randomize.Config{Kind: "none"}, EpochSize: source.EpochInf}, 5},
	} {
		src, err := source.New(r, c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		enc, err := newStateEncoder(src)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 60 {
			if i == 30 { // a restored source keeps encoding the same way
				if err := src.Restore(src.State()); err != nil {
					t.Fatal(err)
				}
			}
			var mb *source.Minibatch
			if c.k > 0 {
				mb, err = src.NextK(c.k)
			} else {
				mb, err = src.Next()
			}
			if err != nil {
				t.Fatal(err)
			}
			want, err := source.EncodeState(src.State())
			if err != nil {
				t.Fatal(err)
			}
			if got := enc.encode(src, mb); !bytes.Equal(got, want) {
				t.Fatalf("%+v minibatch %d:\n got %s\nwant %s", c.cfg, i, got, want)
			}
		}
		src.Close()
	}
}
