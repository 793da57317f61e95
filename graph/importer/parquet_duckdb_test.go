package importer

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/internal/duckdbtest"
)

// Files written by an independent writer (DuckDB): string ids in
// dictionary-encoded columns, several row groups, a weight column. DuckDB
// also writes the same edges as TSV, and both give the same store, byte
// for byte (invariants 1 and 4).
func TestParquetFromDuckDB(t *testing.T) {
	duckdbtest.Need(t)
	dir := t.TempDir()
	pq, tsv := filepath.Join(dir, "e.parquet"), filepath.Join(dir, "e.tsv")
	q := duckdbtest.Quote
	edges := `select case when r = 'tagged' then 'i' else 'u' end || (i * 7 % 150) as src, r as rel,
	    case when r = 'follows' then 'u' || (i * 13 % 200) when r = 'buys' then 'i' || (i % 100) else 't' || (i % 5) end as dst,
	    (i % 8) / 4.0 as weight
	  from (select i, (['buys', 'follows', 'tagged'])[1 + i % 3] as r from range(5000) t(i)) order by i`
	duckdbtest.Exec(t, fmt.Sprintf(`copy (%s) to %s (format parquet, row_group_size 2048);
	  copy (%s) to %s (format csv, delimiter '\t', header false)`, edges, q(pq), edges, q(tsv)))
	meta := duckdbtest.Query(t, "select count(distinct row_group_id), bool_or(encodings like '%DICTIONARY%') from parquet_metadata("+q(pq)+") where path_in_schema = 'src'")
	if meta[0][0] != "3" || meta[0][1] != "true" {
		t.Fatalf("DuckDB wrote %s row groups, dictionary %s: want 3 and true", meta[0][0], meta[0][1])
	}
	var snaps []map[string][]byte
	for _, in := range []string{tsv, pq} {
		c := kgConfig(t, filepath.Join(dir, filepath.Ext(in)[1:]), 3, 1)
		o := kgOptions()
		if in == pq {
			o = DefaultOptions()
			o.LhsName, o.RelName, o.RhsName, o.WeightName = "src", "rel", "dst", "weight"
		}
		rep, err := Import(context.Background(), c, o, []string{in})
		if err != nil {
			t.Fatal(err)
		}
		if rep.EdgeSets[0].Edges != 5000 {
			t.Fatalf("%s: %d edges", in, rep.EdgeSets[0].Edges)
		}
		snaps = append(snaps, snapshot(t, c, in))
	}
	sameStores(t, snaps[0], snaps[1])
}

// Integer ids (BIGINT, INTEGER, UBIGINT) and nulls written by DuckDB: the
// null rows are reported at the rows DuckDB numbers them (file_row_number),
// in the right row group, and the other rows are stored with their
// integer ids as names.
func TestParquetNullsFromDuckDB(t *testing.T) {
	duckdbtest.Need(t)
	dir := t.TempDir()
	pq := filepath.Join(dir, "n.parquet")
	q := duckdbtest.Quote
	duckdbtest.Exec(t, `copy (select case when i % 997 = 5 then null else (i % 300)::bigint - 100 end as src,
	    (i % 211)::integer as dst, (i % 3)::ubigint as kind
	  from range(6000) t(i) order by i) to `+q(pq)+` (format parquet, row_group_size 2048)`)
	nulls := duckdbtest.Query(t, "select file_row_number // 2048, file_row_number from read_parquet("+q(pq)+", file_row_number = true) where src is null order by 2")
	c := intConfig(t, dir, true)
	o := DefaultOptions()
	o.LhsName, o.RhsName, o.RelName, o.MaxErrors = "src", "dst", "kind", 100
	rep, err := Import(context.Background(), c, o, []string{pq})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.BadLines) != len(nulls) || len(nulls) != 7 {
		t.Fatalf("%d bad rows, DuckDB finds %d nulls (want 7)", len(rep.BadLines), len(nulls))
	}
	for i, e := range rep.BadLines {
		got := []string{strconv.Itoa(e.Parquet.RowGroup), strconv.FormatInt(e.Parquet.Row, 10)}
		if strings.Join(got, " ") != strings.Join(nulls[i], " ") || e.Parquet.Column != "src" || e.Reason != ReasonNull {
			t.Errorf("bad row %d: %v, DuckDB says row group and row %v", i, e, nulls[i])
		}
	}
	if fmt.Sprint(rep.Relations) != "[0 1 2]" {
		t.Errorf("relations %v, want the UBIGINT values 0 1 2 in order of appearance", rep.Relations)
	}
	f := "read_parquet(" + q(pq) + ")"
	want := duckdbtest.Query(t, "select count(*) from (select src::varchar from "+f+" where src is not null union select dst::varchar from "+f+" where src is not null)")
	if n := rep.Entities["n"]; strconv.Itoa(n) != want[0][0] {
		t.Errorf("%d entities, DuckDB counts %s distinct ids", n, want[0][0])
	}
}

// Integer ids written by DuckDB (BIGINT with its extremes, INTEGER, an
// INTEGER relation column, several row groups) between two text files of
// the same ids: the integer index and the name table give the store of
// the same edges as three text files, byte for byte.
func TestParquetIntegerIDsFromDuckDB(t *testing.T) {
	duckdbtest.Need(t)
	dir := t.TempDir()
	q := duckdbtest.Quote
	edges := func(from, to int) string {
		return fmt.Sprintf(`select case when i %% 11 = 0 then 9223372036854775807 when i %% 13 = 0 then -9223372036854775808
	    else (i * 7 %% 500)::bigint - 250 end as src, ([7, -3, 0])[1 + i %% 3]::integer as rel, (i %% 301)::integer - 150 as dst
	  from range(%d, %d) t(i) order by i`, from, to)
	}
	a, b, mid, midTSV := filepath.Join(dir, "a.tsv"), filepath.Join(dir, "b.tsv"), filepath.Join(dir, "mid.parquet"), filepath.Join(dir, "mid.tsv")
	csv := "(format csv, delimiter '\t', header false)"
	duckdbtest.Exec(t, fmt.Sprintf(`copy (%s) to %s %s; copy (%s) to %s %s;
	  copy (%s) to %s (format parquet, row_group_size 2048); copy (%s) to %s %s`,
		edges(0, 1000), q(a), csv, edges(5000, 6000), q(b), csv, edges(1000, 5000), q(mid), edges(1000, 5000), q(midTSV), csv))
	var snaps []map[string][]byte
	for _, in := range []string{midTSV, mid} {
		c := typedIntConfig(t, filepath.Join(dir, filepath.Ext(in)[1:]), 3)
		o := DefaultOptions()
		o.RelCol, o.RhsCol = 1, 2
		rep, err := Import(context.Background(), c, o, []string{a, in, b})
		if err != nil {
			t.Fatal(err)
		}
		if rep.EdgeSets[1].Edges != 4000 {
			t.Fatalf("%s: %d edges", in, rep.EdgeSets[1].Edges)
		}
		snaps = append(snaps, snapshot(t, c, ""))
	}
	sameStores(t, snaps[0], snaps[1])
}
