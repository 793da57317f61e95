package parquet

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/internal/duckdbtest"
)

// duckdbCodecs are the COMPRESSION values DuckDB's COPY takes (lz4 and
// lz4_raw both write LZ4_RAW).
var duckdbCodecs = []string{"uncompressed", "snappy", "gzip", "zstd", "brotli", "lz4", "lz4_raw"}

// codecRows is a SELECT of n rows whose numbers compress poorly (LZ4
// gives less than threefold, the case that lost pages), each computable
// here: row i has a dense stream d of 1 + i%3 samples (codecDense), a
// sparse stream s of 1 + i%4 samples (codecSparse) and an id.
func codecRows(n int) string {
	return fmt.Sprintf(`select 'r' || i as id,
	list_transform(range(1 + i %% 3), lambda j: [((i * 1103515245 + j * 12345) %% 16777213)::FLOAT, ((i * 69069 + j * 1013904223) %% 16777199)::FLOAT]) as d,
	list_transform(range(1 + i %% 4), lambda j: ((i * 7919 + j * 104729) %% 1000)::INTEGER) as s,
	list_transform(range(1 + i %% 4), lambda j: ((i * 40503 + j * 7) %% 65521)::DOUBLE / 8) as s_values
	from range(%d) t(i)`, n)
}

func codecDense(i, j int) [2]float32 {
	return [2]float32{float32((i*1103515245 + j*12345) % 16777213), float32((i*69069 + j*1013904223) % 16777199)}
}

func codecSparse(i, j int) (int32, float32) {
	return int32((i*7919 + j*104729) % 1000), float32((i*40503+j*7)%65521) / 8
}

// TestDuckDBCodecs: a corpus DuckDB wrote with each codec it offers, in
// data pages of format versions 1 and 2, small pages (row groups of 2048
// rows, dense pages of about 30 KB) and large ones (one row group of 8192
// rows, a dense page of about 130 KB), reads with the values DuckDB was
// given (invariant 1). Every LZ4 file failed as "a damaged page" before
// internal/pqlz4.
func TestDuckDBCodecs(t *testing.T) {
	duckdbtest.Need(t)
	dir := t.TempDir()
	type file struct {
		path string
		rows int
	}
	var files []file
	var sql strings.Builder
	for _, size := range []struct {
		name      string
		rows, cut int
	}{{"small", 3000, 2048}, {"large", 8192, 8192}} {
		for _, v := range []string{"v1", "v2"} {
			for _, c := range duckdbCodecs {
				p := filepath.Join(dir, fmt.Sprintf("%s_%s_%s.parquet", c, v, size.name))
				fmt.Fprintf(&sql, "copy (%s) to %s (format parquet, compression %s, parquet_version %s, row_group_size %d);\n",
					codecRows(size.rows), duckdbtest.Quote(p), c, v, size.cut)
				files = append(files, file{p, size.rows})
			}
		}
	}
	duckdbtest.Exec(t, sql.String())
	streams := []corpus.Stream{{Name: "d", Dim: 2}, {Name: "s", Dim: 1000, Sparse: true}}
	for _, f := range files {
		t.Run(filepath.Base(f.path), func(t *testing.T) {
			r := openT(t, f.path, Config{Streams: streams, ChunkSequences: 4096})
			l := r.Layout()
			if l.NumSequences() != f.rows {
				t.Fatalf("%d sequences, want %d", l.NumSequences(), f.rows)
			}
			for c := range l.NumChunks() {
				checkCodecChunk(t, chunk(t, r, c))
			}
		})
	}
}

// checkCodecChunk compares a chunk of a codecRows file with the values
// the SELECT gives.
func checkCodecChunk(t *testing.T, ch *corpus.Chunk) {
	t.Helper()
	for k := range ch.Len() {
		i := ch.First + k
		if want := fmt.Sprintf("r%d", i); ch.IDs[k] != want {
			t.Fatalf("row %d: id %q, want %q", i, ch.IDs[k], want)
		}
		d := ch.Streams[0]
		for j := range 1 + i%3 {
			got := d.Dense[(int(d.SeqStart[k])+j)*2:][:2]
			if want := codecDense(i, j); got[0] != want[0] || got[1] != want[1] {
				t.Fatalf("row %d: d sample %d = %v, want %v", i, j, got, want)
			}
		}
		s := ch.Streams[1]
		for j := range 1 + i%4 {
			e := s.RowStart[int(s.SeqStart[k])+j]
			if ix, v := codecSparse(i, j); s.Indices[e] != ix || s.Values[e] != v {
				t.Fatalf("row %d: s sample %d = %d:%v, want %d:%v", i, j, s.Indices[e], s.Values[e], ix, v)
			}
		}
	}
}
