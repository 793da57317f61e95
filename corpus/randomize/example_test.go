package randomize_test

import (
	"fmt"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/randomize"
)

// Ten one-sample sequences in five chunks of two: CNTK's order, and the
// default window order, for the first two sweeps; then a seek into the
// middle of sweep 1.
func Example() {
	l := &corpus.Layout{
		ChunkStart: []int{0, 2, 4, 6, 8, 10},
		Samples:    []uint32{1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
	}
	for _, cfg := range []randomize.Config{
		{Kind: "cntk", WindowSamples: 1 << 62},
		{Kind: "window", WindowChunks: 2},
	} {
		r, err := randomize.New(cfg, l)
		if err != nil {
			panic(err)
		}
		for s := range uint64(2) {
			c, _ := r.Sweep(s).Seek(0)
			fmt.Print(cfg.Kind, " sweep ", s, ":")
			for q, ok := c.Next(); ok; q, ok = c.Next() {
				fmt.Print(" ", q)
			}
			fmt.Println()
		}
		c, at := r.Sweep(1).Seek(7)
		q, _ := c.Next()
		fmt.Printf("%s sweep 1 offset %d: sequence %d, %d labels before it\n", cfg.Kind, at, q, r.Sweep(1).LabelsBefore(7))
	}
	// Output:
	// cntk sweep 0: 6 3 1 5 9 0 4 2 7 8
	// cntk sweep 1: 3 0 8 4 7 5 2 9 1 6
	// cntk sweep 1 offset 7: sequence 9, 7 labels before it
	// window sweep 0: 2 5 3 4 8 7 6 9 1 0
	// window sweep 1: 9 8 7 6 4 1 0 5 3 2
	// window sweep 1 offset 7: sequence 5, 7 labels before it
}
