package importer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/internal/duckdbtest"
	"github.com/batchprep/batchprep/internal/pqtest"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// duckdbCodecs are the COMPRESSION values DuckDB's COPY takes (lz4 and
// lz4_raw both write LZ4_RAW).
var duckdbCodecs = []string{"uncompressed", "snappy", "gzip", "zstd", "brotli", "lz4", "lz4_raw"}

// Edges DuckDB wrote with each codec it offers, in data pages of format
// versions 1 and 2, small pages (row groups of 2048 rows) and large ones
// (one row group of 12288 rows: the weights, in plain doubles, take a page
// of 96 KiB), with values that compress poorly (LZ4 gives less than
// threefold, the case that lost pages): each file gives the store the
// uncompressed file gives, byte for byte, and TestParquetFromDuckDB ties
// that to the same edges in text (invariants 1 and 4). Every LZ4 file
// failed with "a page cannot be decoded" before internal/pqlz4.
func TestParquetCodecsFromDuckDB(t *testing.T) {
	duckdbtest.Need(t)
	dir := t.TempDir()
	edges := func(n int) string {
		return fmt.Sprintf(`select case when r = 'tagged' then 'i' else 'u' end || (i * 1103515245 %% 211) as src, r as rel,
	    case when r = 'follows' then 'u' || (i * 69069 %% 199) when r = 'buys' then 'i' || (i * 40503 %% 197) else 't' || (i %% 5) end as dst,
	    (i * 7919 %% 65521) / 8.0 as weight
	  from (select i, (['buys', 'follows', 'tagged'])[1 + i %% 3] as r from range(%d) t(i)) order by i`, n)
	}
	type input struct {
		path, ref string
		rows      int
	}
	var ins []input
	var sql strings.Builder
	for _, size := range []struct {
		name      string
		rows, cut int
	}{{"small", 4200, 2048}, {"large", 12288, 12288}} {
		for _, v := range []string{"v1", "v2"} {
			var ref string
			for _, c := range duckdbCodecs {
				p := filepath.Join(dir, fmt.Sprintf("%s_%s_%s.parquet", c, v, size.name))
				fmt.Fprintf(&sql, "copy (%s) to %s (format parquet, compression %s, parquet_version %s, row_group_size %d);\n",
					edges(size.rows), duckdbtest.Quote(p), c, v, size.cut)
				if ref == "" {
					ref = p
				}
				ins = append(ins, input{p, ref, size.rows})
			}
		}
	}
	duckdbtest.Exec(t, sql.String())
	want := map[string]map[string][]byte{}
	for _, in := range ins {
		t.Run(filepath.Base(in.path), func(t *testing.T) {
			got := importSnapshot(t, filepath.Join(dir, "store", filepath.Base(in.path)), in.path, in.rows)
			if in.path == in.ref {
				want[in.ref] = got
				return
			}
			if want[in.ref] == nil {
				t.Fatalf("no store from %s to compare with", filepath.Base(in.ref))
			}
			sameStores(t, want[in.ref], got)
		})
	}
}

// importSnapshot imports the kgConfig edges in the Parquet file in
// (columns src rel dst weight, rows rows) into a store under dir and
// returns the store's files.
func importSnapshot(t *testing.T, dir, in string, rows int) map[string][]byte {
	t.Helper()
	c := kgConfig(t, dir, 2, 1)
	o := DefaultOptions()
	o.LhsName, o.RelName, o.RhsName, o.WeightName = "src", "rel", "dst", "weight"
	rep, err := Import(context.Background(), c, o, []string{in})
	if err != nil {
		t.Fatal(err)
	}
	if rep.EdgeSets[0].Edges != int64(rows) {
		t.Fatalf("%d edges, want %d", rep.EdgeSets[0].Edges, rows)
	}
	return snapshot(t, c, "")
}

// A column chunk compressed with LZO or the Hadoop-framed LZ4 (codecs
// with no decoder here) is refused with the file, row group, codec and
// column named, not reported as a corrupt page.
func TestParquetUnreadableCodec(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "snappy.parquet")
	// Snappy pages under another codec's name: compressed pages, as an
	// LZO file's are, that no decoder here can read.
	writePQOpts(t, in, []pqEdge{{"a", "r", "b", 1}, {"b", "r", "c", 1}}, parquet.Compression(&parquet.Snappy), parquet.DataPageVersion(1))
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []format.CompressionCodec{format.LZO, format.Lz4} {
		p := filepath.Join(dir, c.String()+".parquet")
		if err := os.WriteFile(p, withCodec(t, data, c), 0o644); err != nil {
			t.Fatal(err)
		}
		o := DefaultOptions()
		o.LhsName, o.RhsName = "src", "dst"
		_, err := Import(context.Background(), intConfig(t, filepath.Join(dir, c.String()), false), o, []string{p})
		want := p + `: row group 0: column "src" is compressed with ` + c.String() + ", which batchprep cannot decode"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", c, err, want)
		}
	}
}

// withCodec returns the Parquet file data with every column chunk
// claiming codec c (pqtest.WithCodec).
func withCodec(t *testing.T, data []byte, c format.CompressionCodec) []byte {
	t.Helper()
	out, err := pqtest.WithCodec(data, c)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
