package parquet

import (
	"bytes"
	"context"
	"sync"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/batchprep/batchprep/corpus"
)

// hintBlob is a memBlob that is a corpus.Hinter, as an object is: it logs
// the ranges hinted and whether any read came after the footer's before
// the first hint.
type hintBlob struct {
	memBlob
	footer int64 // reads at or past it are the footer's
	mu     sync.Mutex
	hints  [][2]int64
	early  bool // a read of the data before any hint
}

func (b *hintBlob) Hint(off, n int64) {
	b.mu.Lock()
	b.hints = append(b.hints, [2]int64{off, off + n})
	b.mu.Unlock()
}

func (b *hintBlob) ReadAt(p []byte, off int64) (int, error) {
	b.mu.Lock()
	if len(b.hints) == 0 && off >= 4 && off < b.footer {
		b.early = true
	}
	b.mu.Unlock()
	return b.memBlob.ReadAt(p, off)
}

// TestHintsColumnChunks: opening an object asks for the column chunks of
// the configured streams in every row group, adjacent ones as one range,
// before reading any page of them, and never for a column no stream
// reads; the corpus is the same as without hints.
func TestHintsColumnChunks(t *testing.T) {
	g := pq.Group{"x": list(f32), "unused": list(f64)}
	var rows []map[string]any
	for i := range 400 {
		rows = append(rows, map[string]any{"x": []any{float32(i), float32(i + 1)}, "unused": []any{float64(i)}})
	}
	data := encode(t, g, rows, 50) // 8 row groups
	cfg := Config{Streams: []corpus.Stream{{Name: "x", Dim: 1}}}
	pf, err := pq.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	md := pf.Metadata()
	col := -1
	for i, c := range md.RowGroups[0].Columns {
		if c.MetaData.PathInSchema[0] == "x" {
			col = i
		}
	}
	var footer int64 // the end of the last column chunk
	for _, rg := range md.RowGroups {
		for _, c := range rg.Columns {
			_, end := chunkSpan(&c.MetaData)
			footer = max(footer, end)
		}
	}
	b := &hintBlob{memBlob: memBlob{bytes.NewReader(data)}, footer: footer}
	r, err := OpenFile(context.Background(), b, "f.parquet", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if b.early {
		t.Error("a column page was read before the hints")
	}
	covered := func(lo, hi int64) bool {
		for _, h := range b.hints {
			if h[0] <= lo && hi <= h[1] {
				return true
			}
		}
		return false
	}
	for gi, rg := range md.RowGroups {
		for ci, c := range rg.Columns {
			lo, hi := chunkSpan(&c.MetaData)
			if ci == col && !covered(lo, hi) {
				t.Errorf("row group %d: the x column chunk [%d, %d) is not hinted: %v", gi, lo, hi, b.hints)
			}
			for _, h := range b.hints {
				if ci != col && lo < h[1] && h[0] < hi {
					t.Errorf("row group %d: the unused column chunk [%d, %d) is hinted (%v)", gi, lo, hi, h)
				}
			}
		}
	}
	plain, err := OpenFile(context.Background(), memBlob{bytes.NewReader(data)}, "f.parquet", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if r.Layout().NumSequences() != plain.Layout().NumSequences() || r.Layout().TotalSamples() != plain.Layout().TotalSamples() {
		t.Error("the layout differs with hints")
	}
}
