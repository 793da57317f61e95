package parquet

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/batchprep/batchprep/corpus"
)

// TestWriterRoundTrip: each form Widen chooses reads back as written,
// across row groups of two rows.
func TestWriterRoundTrip(t *testing.T) {
	streams := []corpus.Stream{{Name: "d", Dim: 2}, {Name: "hot", Dim: 5, Sparse: true}, {Name: "single", Dim: 5, Sparse: true}, {Name: "bag", Dim: 5, Sparse: true}}
	ch := &corpus.Chunk{IDs: []string{"10", "11", "12"}, Streams: []corpus.StreamData{
		{SeqStart: []int32{0, 1, 3, 4}, Dense: []float32{1, 2, 3, 4, 5, 6, 7, 8}},
		{SeqStart: []int32{0, 1, 2, 3}, RowStart: []int32{0, 1, 2, 3}, Indices: []int32{4, 0, 2}, Values: []float32{1, 1, 1}},
		{SeqStart: []int32{0, 2, 3, 4}, RowStart: []int32{0, 1, 2, 3, 4}, Indices: []int32{1, 2, 3, 4}, Values: []float32{0.5, 1, -2, 1}},
		{SeqStart: []int32{0, 1, 3, 4}, RowStart: []int32{0, 2, 2, 3, 4}, Indices: []int32{0, 1, 2, 3}, Values: []float32{1, 1, 3, 1}},
	}}
	forms := Forms(streams)
	Widen(forms, streams, ch)
	if want := []Form{Dense, OneHot, SparseSingle, SparseLists}; !reflect.DeepEqual(forms, want) {
		t.Fatalf("forms %v, want %v", forms, want)
	}
	p := filepath.Join(t.TempDir(), "w.parquet")
	os.WriteFile(p, written(t, streams, WriterOptions{Forms: forms, RowGroupRows: 2}, ch), 0o644)
	r := openT(t, p, Config{Streams: streams})
	if r.RowGroups() != 2 {
		t.Errorf("%d row groups, want 2", r.RowGroups())
	}
	if got := r.Layout().Samples; !reflect.DeepEqual(got, []uint32{2, 2, 1}) {
		t.Errorf("samples %v, want [2 2 1]", got)
	}
	got := chunk(t, r, 0)
	if !reflect.DeepEqual(got.IDs, ch.IDs) {
		t.Errorf("ids %v", got.IDs)
	}
	for s := range streams {
		g, w := got.Streams[s], ch.Streams[s]
		n := int(w.SeqStart[len(w.SeqStart)-1])
		if !reflect.DeepEqual(g.SeqStart, w.SeqStart) || !reflect.DeepEqual(g.Dense, w.Dense) {
			t.Errorf("stream %s: %v %v, want %v %v", streams[s].Name, g.SeqStart, g.Dense, w.SeqStart, w.Dense)
		}
		if streams[s].Sparse {
			e := w.RowStart[n]
			if !reflect.DeepEqual(g.RowStart[:n+1], w.RowStart) || !reflect.DeepEqual(g.Indices[:e], w.Indices) || !reflect.DeepEqual(g.Values[:e], w.Values) {
				t.Errorf("stream %s: %v %v %v, want %v %v %v", streams[s].Name, g.RowStart[:n+1], g.Indices, g.Values[:e], w.RowStart, w.Indices, w.Values)
			}
		}
	}
}

// TestPagesEndWithChunks: the Writer ends the pages of its larger columns
// where a Reader with the same chunk size ends its chunks, and a chunk's
// load reads its own pages and stops at their end: loading every chunk
// once reads each byte of those columns once.
func TestPagesEndWithChunks(t *testing.T) {
	streams := []corpus.Stream{{Name: "x", Dim: 1}}
	const n, chunkBytes = 8 * 8192, 8192 * 4 // 8 chunks of 8,192 one-value rows
	ch := &corpus.Chunk{IDs: make([]string, n), Streams: []corpus.StreamData{{SeqStart: make([]int32, n+1), Dense: make([]float32, n)}}}
	for i := range n {
		ch.IDs[i] = strconv.Itoa(i * 7919 % 100003)
		ch.Streams[0].SeqStart[i+1] = int32(i + 1)
		ch.Streams[0].Dense[i] = float32(i%1000) / 7
	}
	blob := &spanLog{memBlob: memBlob{bytes.NewReader(written(t, streams, WriterOptions{ChunkBytes: chunkBytes}, ch))}}
	r, err := OpenFile(context.Background(), blob, "f.parquet", Config{Streams: streams, ChunkBytes: chunkBytes})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Layout().NumChunks() != 8 {
		t.Fatalf("%d chunks, want 8", r.Layout().NumChunks())
	}
	var columns int64
	for _, c := range r.pf.Metadata().RowGroups[0].Columns {
		columns += c.MetaData.TotalCompressedSize
	}
	for _, x := range r.pf.OffsetIndexes() {
		if len(x.PageLocations) < 8 {
			t.Errorf("a column of %d pages for 8 chunks", len(x.PageLocations))
		}
	}
	blob.reads = nil
	for c := range 8 {
		got := chunk(t, r, c)
		if got.IDs[0] != ch.IDs[c*8192] {
			t.Fatalf("chunk %d starts with id %s, want %s", c, got.IDs[0], ch.IDs[c*8192])
		}
	}
	if blob.read() > columns {
		t.Errorf("loading each chunk once read %d bytes of columns of %d: pages read twice", blob.read(), columns)
	}
}

// written is the Parquet file a Writer with opt makes of ch.
func written(t testing.TB, streams []corpus.Stream, opt WriterOptions, ch *corpus.Chunk) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := NewWriter(&b, streams, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChunk(ch); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
