package parquet

import (
	"os"
	"reflect"
	"slices"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/batchprep/batchprep/corpus"
)

// TestMappedCounts: a file whose counts go to a mapped file (spillAbove)
// gets the layout a heap index gets (chunks, counts, sums, hash), keeps
// per-chunk data only on its heap, reads the same chunks, and leaves no
// temporary file.
func TestMappedCounts(t *testing.T) {
	var rows []map[string]any
	for i := range 3000 {
		hot := make([]any, 1+i%5)
		for j := range hot {
			hot[j] = int32((i + j) % 10)
		}
		rows = append(rows, map[string]any{"x": hot, "y": hot[:min(len(hot), 1+i%2)]})
	}
	p := writeFile(t, pq.Group{"x": list(i32), "y": list(i32)}, rows, 700)
	streams := []corpus.Stream{{Name: "x", Dim: 10, Sparse: true}, {Name: "y", Dim: 10, Sparse: true}}
	for _, cfg := range []Config{{Streams: streams, ChunkSequences: 64}, {Streams: streams, Label: "y", ChunkBytes: 5000}} {
		heap := openT(t, p, cfg)
		dir := t.TempDir()
		t.Setenv("TMPDIR", dir)
		func() {
			defer func(v int64) { spillAbove = v }(spillAbove)
			spillAbove = 0
			r := openT(t, p, cfg)
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("%d files left in the spill directory", len(ents))
			}
			hl, ml := heap.Layout(), r.Layout()
			if ml.Pager == nil || r.counts == nil {
				t.Fatal("the counts are not mapped")
			}
			if !reflect.DeepEqual(hl.ChunkStart, ml.ChunkStart) || !slices.Equal(hl.Samples, ml.Samples) ||
				!slices.Equal(hl.Labels, ml.Labels) || !slices.Equal(hl.ChunkSamples, ml.ChunkSamples) ||
				!slices.Equal(hl.ChunkLabels, ml.ChunkLabels) || (hl.Labels == nil) != (ml.Labels == nil) {
				t.Fatalf("label %q: the mapped layout differs from the heap one", cfg.Label)
			}
			fresh := &corpus.Layout{ChunkStart: hl.ChunkStart, Samples: hl.Samples, Labels: hl.Labels}
			if ml.Hash() != fresh.Hash() {
				t.Fatalf("hash %s, want %s", ml.Hash(), fresh.Hash())
			}
			for c := range ml.NumChunks() {
				if !reflect.DeepEqual(chunk(t, r, c), chunk(t, heap, c)) {
					t.Fatalf("chunk %d differs", c)
				}
				ml.Release(c)
			}
		}()
	}
}
