package source_test

import (
	"fmt"
	"log"
	"strconv"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/source"
)

// exampleCorpus is six one-sample sequences, two per chunk, with a dense
// stream "x" holding the sequence number.
func exampleCorpus() *corpus.Memory {
	var seqs []corpus.MemorySequence
	for i := 0; i < 6; i++ {
		seqs = append(seqs, corpus.MemorySequence{ID: strconv.Itoa(100 + i),
			Streams: []corpus.MemoryStream{{Dense: [][]float32{{float32(i)}}}}})
	}
	m, err := corpus.NewMemory([]corpus.Stream{{Name: "x", Dim: 1}}, seqs, corpus.MemoryConfig{ChunkSequences: 2})
	if err != nil {
		log.Fatal(err)
	}
	return m
}

// Read two sweeps in file order with minibatches of 4 samples: the second
// minibatch crosses the sweep end and says so.
func Example() {
	cfg := source.Config{EpochSize: source.EpochInf, Schedule: source.ConstantSchedule(4)}
	cfg.Randomize.Kind = "none"
	src, err := source.New(exampleCorpus(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close()
	for i := 0; i < 3; i++ {
		mb, err := src.Next()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("step %d [%d,%d) sweep %d end_of_sweep=%v ids %v x %v\n",
			mb.Step, mb.Start, mb.End, mb.Sweep, mb.EndOfSweep, mb.IDs, mb.Streams[0].Dense)
	}
	// Output:
	// step 0 [0,4) sweep 0 end_of_sweep=false ids [100 101 102 103] x [0 1 2 3]
	// step 1 [4,8) sweep 0 end_of_sweep=true ids [104 105 100 101] x [4 5 0 1]
	// step 2 [8,12) sweep 1 end_of_sweep=true ids [102 103 104 105] x [2 3 4 5]
}

// Checkpoint at every epoch end with OnEpochEnd, then resume from the saved
// state in a new Source: it continues exactly where the first one stopped.
func ExampleConfig_onEpochEnd() {
	var saved []byte
	cfg := source.Config{EpochSize: 5, Schedule: source.ConstantSchedule(2)}
	cfg.Randomize.Kind = "none"
	cfg.OnEpochEnd = func(epoch int, st source.State) {
		saved, _ = source.EncodeState(st)
		fmt.Printf("epoch %d ended at position %d\n", epoch, st.Position)
	}
	src, _ := source.New(exampleCorpus(), cfg)
	for i := 0; i < 4; i++ {
		mb, _ := src.Next()
		fmt.Println("read", mb.IDs)
	}

	st, err := source.DecodeState(saved)
	if err != nil {
		log.Fatal(err)
	}
	cfg.OnEpochEnd = nil
	resumed, _ := source.New(exampleCorpus(), cfg)
	if err := resumed.Restore(st); err != nil {
		log.Fatal(err)
	}
	mb, _ := resumed.Next()
	fmt.Println("resumed at step", mb.Step, "epoch", mb.Epoch, "read", mb.IDs)
	// Output:
	// read [100 101]
	// read [102 103]
	// epoch 0 ended at position 5
	// read [104]
	// read [105 100]
	// resumed at step 3 epoch 1 read [105 100]
}

// Two data-parallel ranks split each global minibatch by sample count; both
// report the same global positions.
func ExampleConfig_workers() {
	for rank := 0; rank < 2; rank++ {
		cfg := source.Config{Workers: 2, Rank: rank, Schedule: source.ConstantSchedule(4)}
		cfg.Randomize.Kind = "none"
		src, _ := source.New(exampleCorpus(), cfg)
		mb, _ := src.Next()
		fmt.Printf("rank %d: [%d,%d) sequences %v\n", rank, mb.Start, mb.End, mb.Sequences)
	}
	// Output:
	// rank 0: [0,4) sequences [0 1]
	// rank 1: [0,4) sequences [2 3]
}

// ParseSchedule reads CNTK's per-epoch minibatch-size syntax.
func ExampleParseSchedule() {
	sc, err := source.ParseSchedule("128*2:1024")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sc.At(0), sc.At(1), sc.At(2), sc.At(50))
	_, err = source.ParseSchedule("128*2:lots")
	fmt.Println(err)
	// Output:
	// 128 128 1024 1024
	// source: bad minibatch schedule "128*2:lots": token 2 "lots": size "lots" is not a positive integer
}
