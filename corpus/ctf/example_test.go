package ctf_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
)

// Write a small corpus, open it and read its only chunk.
func Example() {
	dir, _ := os.MkdirTemp("", "ctf-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tiny.ctf")
	streams := []corpus.Stream{{Name: "w", Dim: 100, Sparse: true}, {Name: "y", Dim: 2}}

	f, _ := os.Create(path)
	w := ctf.NewWriter(f, streams)
	w.Write("7", [][]ctf.Sample{
		{{Indices: []int32{3}, Values: []float32{1}}, {Indices: []int32{41}, Values: []float32{1}}},
		{{Values: []float32{0, 1}}},
	})
	w.Write("8", [][]ctf.Sample{
		{{Indices: []int32{5}, Values: []float32{0.5}}},
		{{Values: []float32{1, 0}}},
	})
	w.Flush()
	f.Close()
	data, _ := os.ReadFile(path)
	fmt.Print(string(data))

	r, err := ctf.Open(path, ctf.Config{Streams: streams, Label: "y"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	l := r.Layout()
	fmt.Println("sequences", l.NumSequences(), "samples", l.Samples, "labels", l.Labels, "chunks", l.NumChunks())
	ch, _ := r.LoadChunk(0)
	fmt.Println("ids", ch.IDs, "w indices", ch.Streams[0].Indices, "y", ch.Streams[1].Dense)
	// Output:
	// 7 |w 3:1 |y 0 1
	// 7 |w 41:1
	// 8 |w 5:0.5 |y 1 0
	// sequences 2 samples [2 1] labels [1 1] chunks 1
	// ids [7 8] w indices [3 41 5] y [0 1 1 0]
}

// Diagnostics name the file, line, column and byte offset; a bad sequence
// within the error budget is reported in Chunk.Bad and has no data.
func Example_diagnostics() {
	dir, _ := os.MkdirTemp("", "ctf-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "bad.ctf")
	os.WriteFile(path, []byte("1 |x 1 2\n2 |x 1 .5\n3 |x 4\n"), 0o644)

	cfg := ctf.Config{
		Streams:   []corpus.Stream{{Name: "x", Dim: 2}},
		MaxErrors: 1,
		Warn: func(e ctf.Error) {
			fmt.Printf("%s:%d:%d [%s] %s\n", filepath.Base(e.File), e.Line, e.Col, ctf.Kind(&e), e.Msg)
		},
	}
	r, _ := ctf.Open(path, cfg)
	defer r.Close()
	ch, _ := r.LoadChunk(0)
	fmt.Println("bad:", ch.BadAt(0) == nil, ch.BadAt(1) != nil, ch.BadAt(2) == nil)
	fmt.Println("skipped:", r.Summary().Skipped)
	// Output:
	// bad.ctf:3:3 [dense-short] stream "x": 1 of 2 values; zero-padded
	// bad.ctf:2:8 [number] unexpected '.' in a number; expected a digit
	// bad: true true true
	// skipped: map[number:1]
}
