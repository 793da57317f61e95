package ctf

import (
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

// TestSharedOneHotArrays: a one-hot sparse stream's row starts and values
// are corpus's shared arrays, other streams' are the chunk's own; a
// recycled chunk that held shared arrays is parsed again into arrays of
// its own without writing into the shared ones.
func TestSharedOneHotArrays(t *testing.T) {
	// Chunk 0: w is one-hot (one entry per sample, value 1), f is not.
	// Chunk 1: w has a value 2 and a sample with two entries.
	content := "0 |w 3:1 |f 1:0.5\n0 |w 7:1 |f 2:1 4:1\n1 |w 2:1 |f 3:1\n" +
		"2 |w 5:2 |f 1:1\n2 |w 1:1 6:1\n3 |w 0:1 |f 2:1\n"
	r := openString(t, content, Config{Streams: []corpus.Stream{sparse("w", 10), sparse("f", 10)}, ChunkSequences: 2}, nil)
	ch0, err := r.LoadChunk(0)
	if err != nil {
		t.Fatal(err)
	}
	w, f := &ch0.Streams[0], &ch0.Streams[1]
	if !corpus.SharedIota(w.RowStart) || !corpus.SharedOnes(w.Values) {
		t.Fatalf("chunk 0: one-hot stream w has arrays of its own: rows %v values %v", w.RowStart, w.Values)
	}
	if corpus.SharedIota(f.RowStart) || corpus.SharedOnes(f.Values) {
		t.Fatal("chunk 0: stream f (two entries in a sample, a value 0.5) shares an array")
	}
	if got := w.Indices; len(got) != 3 || got[0] != 3 || got[1] != 7 || got[2] != 2 {
		t.Fatalf("chunk 0: w indices %v, want [3 7 2]", got)
	}
	r.Recycle(ch0)
	ch1, err := r.LoadChunk(1)
	if err != nil {
		t.Fatal(err)
	}
	w1 := &ch1.Streams[0]
	if corpus.SharedIota(w1.RowStart) || corpus.SharedOnes(w1.Values) {
		t.Fatal("chunk 1: stream w (a value 2, a sample with two entries) shares an array")
	}
	wantRows, wantIdx, wantVals := []int32{0, 1, 3, 4}, []int32{5, 1, 6, 0}, []float32{2, 1, 1, 1}
	for i := range wantRows {
		if w1.RowStart[i] != wantRows[i] {
			t.Fatalf("chunk 1: w row starts %v, want %v", w1.RowStart, wantRows)
		}
	}
	for i := range wantIdx {
		if w1.Indices[i] != wantIdx[i] || w1.Values[i] != wantVals[i] {
			t.Fatalf("chunk 1: w indices %v values %v, want %v %v", w1.Indices, w1.Values, wantIdx, wantVals)
		}
	}
	// The shared arrays are unchanged.
	for i, v := range corpus.Iota(64) {
		if v != int32(i) {
			t.Fatalf("shared Iota[%d] = %d after recycling", i, v)
		}
	}
	for i, v := range corpus.Ones(64) {
		if v != 1 {
			t.Fatalf("shared Ones[%d] = %v after recycling", i, v)
		}
	}
}
