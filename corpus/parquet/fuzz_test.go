package parquet

import (
	"bytes"
	"context"
	"io/fs"
	"testing"
	"time"

	"github.com/batchprep/batchprep/corpus"
	pq "github.com/parquet-go/parquet-go"
)

// fuzzStreams is the configuration the fuzz target reads every input with:
// one stream of each kind the seeds hold.
var fuzzStreams = []corpus.Stream{{Name: "d", Dim: 2}, {Name: "s", Dim: 5, Sparse: true}}

// fuzzSeeds are small files: written by Writer in each form, and with
// optional nodes and nulls as other writers make them.
func fuzzSeeds(t testing.TB) [][]byte {
	ch := &corpus.Chunk{IDs: []string{"1", "2"}, Streams: []corpus.StreamData{
		{SeqStart: []int32{0, 2, 3}, Dense: []float32{1, 2, 3, 4, 5, 6}},
		{SeqStart: []int32{0, 1, 3}, RowStart: []int32{0, 1, 3, 4}, Indices: []int32{4, 0, 1, 2}, Values: []float32{1, 0.5, 2, 1}},
	}}
	var seeds [][]byte
	for _, forms := range [][]Form{{Dense, SparseLists}} {
		seeds = append(seeds, written(t, fuzzStreams, WriterOptions{Forms: forms, RowGroupRows: 1}, ch))
	}
	g := pq.Group{"d": pq.Optional(list(pq.Optional(f64))), "s": pq.Optional(list(pq.Optional(i64)))}
	for _, rows := range [][]map[string]any{
		{{"d": []any{1.0, 2.0}, "s": []any{int64(1)}}, {"d": []any{3.0, 4.0, 5.0, 6.0}, "s": []any{int64(4), int64(0)}}},
		{{"d": []any{1.0, nil}, "s": nil}},
	} {
		seeds = append(seeds, encode(t, g, rows, 1))
	}
	return seeds
}

// memBlob is a corpus.Blob of bytes in memory.
type memBlob struct{ *bytes.Reader }

func (memBlob) Close() error { return nil }

func (b memBlob) Stat() (fs.FileInfo, error) { return memInfo{b.Size()}, nil }

type memInfo struct{ size int64 }

func (i memInfo) Name() string       { return "f.parquet" }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return 0o444 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }

// FuzzReader: whatever the bytes, Open and LoadChunk return a corpus or an
// error, never panic or hang, and a corpus they return satisfies the
// layout's invariants.
func FuzzReader(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// In memory: a fuzz worker stopped at the deadline removes no
		// temporary directory.
		r, err := OpenFile(context.Background(), memBlob{bytes.NewReader(data)}, "f.parquet",
			Config{Streams: fuzzStreams, ChunkSequences: 1})
		if err != nil {
			return
		}
		defer r.Close()
		if err := r.Layout().Validate(); err != nil && r.Layout().NumSequences() > 0 {
			t.Fatalf("layout: %v", err)
		}
		for c := range r.Layout().NumChunks() {
			ch, err := r.LoadChunk(c)
			if err != nil {
				continue
			}
			a, b := r.Layout().Chunk(c)
			if ch.Len() != b-a {
				t.Fatalf("chunk %d: %d sequences, want %d", c, ch.Len(), b-a)
			}
		}
	})
}
