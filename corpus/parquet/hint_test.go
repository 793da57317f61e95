package parquet

import (
	"bytes"
	"context"
	"sync"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/batchprep/batchprep/corpus"
)

// spanLog is a memBlob that is a corpus.Hinter, as an object is, and logs
// the ranges hinted and read, and how many reads came before the first
// hint.
type spanLog struct {
	memBlob
	mu           sync.Mutex
	hints, reads [][2]int64
	beforeHint   int
}

func (b *spanLog) Hint(off, n int64) {
	b.mu.Lock()
	if b.hints == nil {
		b.beforeHint = len(b.reads)
	}
	b.hints = append(b.hints, [2]int64{off, off + n})
	b.mu.Unlock()
}

func (b *spanLog) ReadAt(p []byte, off int64) (int, error) {
	b.mu.Lock()
	b.reads = append(b.reads, [2]int64{off, off + int64(len(p))})
	b.mu.Unlock()
	return b.memBlob.ReadAt(p, off)
}

// read is the number of bytes read since the log was last cleared.
func (b *spanLog) read() int64 {
	var n int64
	for _, r := range b.reads {
		n += r[1] - r[0]
	}
	return n
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
	b := &spanLog{memBlob: memBlob{bytes.NewReader(data)}}
	r, err := OpenFile(context.Background(), b, "f.parquet", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	before := b.reads
	if b.hints != nil {
		before = b.reads[:b.beforeHint]
	}
	for _, rd := range before {
		if rd[0] >= 4 && rd[0] < footer {
			t.Errorf("a column page was read at %d before the hints", rd[0])
		}
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
