package parquet

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/duckdbtest"
)

// duckdbRows is the SELECT the DuckDB tests write: row i has an id, a
// dense stream d of 1 + i%3 samples of dimension 2, a sparse stream s of
// 1 + i%4 entries (indices (i+j)%10, values j%2 + 0.5) and a one-hot
// stream h of int64 indices. 5000 rows: three row groups of DuckDB's
// 2048-row vectors; ids repeat, so DuckDB writes them with a dictionary.
const duckdbRows = `select 'q' || (i % 7) as id,
	list_transform(range(1 + i % 3), lambda j: [(i + j)::FLOAT, (i * j % 4)::FLOAT]) as d,
	list_transform(range(1 + i % 4), lambda j: ((i + j) % 10)::INTEGER) as s,
	list_transform(range(1 + i % 4), lambda j: (j % 2) + 0.5::DOUBLE) as s_values,
	[i % 3] as h
	from range(5000) t(i)`

var duckdbStreams = []corpus.Stream{{Name: "d", Dim: 2}, {Name: "s", Dim: 10, Sparse: true}, {Name: "h", Dim: 3, Sparse: true}}

// TestReadDuckDBFile: a file DuckDB wrote (optional lists and elements,
// row groups, a dictionary-encoded id column, doubles and int64 read as
// float32 and int32) reads with the values DuckDB was given, counted by an
// index pass and opened again from its counts (invariant 6).
func TestReadDuckDBFile(t *testing.T) {
	duckdbtest.Need(t)
	p := filepath.Join(t.TempDir(), "duck.parquet")
	duckdbtest.Exec(t, "copy ("+duckdbRows+") to "+duckdbtest.Quote(p)+" (format parquet, row_group_size 2048)")
	cfg := Config{Streams: duckdbStreams, ChunkSequences: 333, CacheDir: t.TempDir()}
	for open := range 2 {
		r := openT(t, p, cfg)
		if r.FromCounts() != (open == 1) {
			t.Fatalf("open %d: from counts %v", open, r.FromCounts())
		}
		checkDuckDBFile(t, r)
		r.Close()
	}
}

func checkDuckDBFile(t *testing.T, r *Reader) {
	t.Helper()
	if r.RowGroups() != 3 {
		t.Fatalf("%d row groups, want 3", r.RowGroups())
	}
	l := r.Layout()
	if l.NumSequences() != 5000 {
		t.Fatalf("%d sequences, want 5000", l.NumSequences())
	}
	for c := range l.NumChunks() {
		ch := chunk(t, r, c)
		for k := range ch.Len() {
			i := ch.First + k
			if want := uint32(max(1+i%3, 1+i%4)); l.Samples[i] != want {
				t.Fatalf("row %d: %d samples, want %d", i, l.Samples[i], want)
			}
			if want := fmt.Sprintf("q%d", i%7); ch.IDs[k] != want {
				t.Fatalf("row %d: id %q, want %q", i, ch.IDs[k], want)
			}
			d := ch.Streams[0]
			for j := range 1 + i%3 {
				got := d.Dense[(int(d.SeqStart[k])+j)*2:][:2]
				if got[0] != float32(i+j) || got[1] != float32(i*j%4) {
					t.Fatalf("row %d: d sample %d = %v", i, j, got)
				}
			}
			s := ch.Streams[1]
			for j := range 1 + i%4 {
				e := s.RowStart[int(s.SeqStart[k])+j]
				if s.Indices[e] != int32((i+j)%10) || s.Values[e] != float32(j%2)+0.5 {
					t.Fatalf("row %d: s sample %d = %d:%v", i, j, s.Indices[e], s.Values[e])
				}
			}
			h := ch.Streams[2]
			if e := h.RowStart[h.SeqStart[k]]; h.Indices[e] != int32(i%3) || h.Values[e] != 1 {
				t.Fatalf("row %d: h = %d:%v", i, h.Indices[e], h.Values[e])
			}
		}
	}
}

// TestDuckDBDecimal: a DECIMAL column (DuckDB's type for 0.5) is refused
// with a message saying what to do, not read with the wrong scale.
func TestDuckDBDecimal(t *testing.T) {
	duckdbtest.Need(t)
	p := filepath.Join(t.TempDir(), "duck.parquet")
	duckdbtest.Exec(t, "copy (select [0.5, 1.5] as d from range(3)) to "+duckdbtest.Quote(p)+" (format parquet)")
	_, err := Open(p, Config{Streams: []corpus.Stream{{Name: "d", Dim: 2}}})
	if !errors.Is(err, ErrColumnType) || !strings.Contains(err.Error(), "decimals") {
		t.Errorf("error %v, want decimals refused", err)
	}
}

// TestDuckDBNulls: nulls DuckDB wrote (a null list, a null element) are
// errors naming the row group, the row and the column.
func TestDuckDBNulls(t *testing.T) {
	duckdbtest.Need(t)
	for _, c := range []struct{ expr, col, where string }{
		{"case when i = 3000 then null else [i % 3] end", "h", "row group 1, row 3000"},
		{"case when i = 4500 then [1, null] else [i % 3] end", "h", "row group 2, row 4500"},
	} {
		p := filepath.Join(t.TempDir(), "duck.parquet")
		duckdbtest.Exec(t, "copy (select "+c.expr+" as h from range(5000) t(i)) to "+duckdbtest.Quote(p)+" (format parquet, row_group_size 2048)")
		_, err := Open(p, Config{Streams: duckdbStreams[2:]})
		if !errors.Is(err, ErrNull) || !strings.Contains(err.Error(), c.where+`, column "h"`) {
			t.Errorf("%s: error %v, want a null at %s", c.expr, err, c.where)
		}
	}
}
