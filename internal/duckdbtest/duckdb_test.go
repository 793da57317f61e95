package duckdbtest

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Invariant 1: the last statement's rows come back as text, NULL as "NULL".
func TestQueryValues(t *testing.T) {
	cols, rows := QueryColumns(t, "select 1 as one; select 42::bigint as a, 'x''y' as b, null::varchar as c, 1.5::double as d, [1, 2] as l")
	if want := []string{"a", "b", "c", "d", "l"}; !reflect.DeepEqual(cols, want) {
		t.Fatalf("columns %q, want %q", cols, want)
	}
	want := [][]string{{"42", "x'y", Null, "1.5", "[1, 2]"}}
	if !reflect.DeepEqual(rows, want) {
		t.Fatalf("rows %q, want %q", rows, want)
	}
}

// Invariant 1: a Parquet file written by one call is read by the next, and
// the row groups asked for are there. DuckDB cuts row groups in whole
// vectors of 2048 rows, so a row group never holds fewer (but the last).
func TestParquetRoundTrip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "e's.parquet")
	Exec(t, "copy (select i::bigint as src, 'r' || (i % 3) as rel from range(5000) t(i)) to "+Quote(p)+" (format parquet, row_group_size 2048)")
	rows := Query(t, "select count(*), count(distinct rel), max(src) from read_parquet("+Quote(p)+")")
	if want := [][]string{{"5000", "3", "4999"}}; !reflect.DeepEqual(rows, want) {
		t.Fatalf("rows %q, want %q", rows, want)
	}
	groups := Query(t, "select count(distinct row_group_id) from parquet_metadata("+Quote(p)+")")
	if groups[0][0] != "3" {
		t.Fatalf("%s row groups, want 3", groups[0][0])
	}
}

// Invariant 3: a SQL error carries DuckDB's message.
func TestQueryError(t *testing.T) {
	Need(t)
	_, _, err := run("select * from no_such_table")
	if err == nil || !strings.Contains(err.Error(), "no_such_table") {
		t.Fatalf("error %v, want one naming no_such_table", err)
	}
}

// Invariant 2: Available names what is missing when node is not on PATH.
func TestAvailableWithoutNode(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := Available()
	if err == nil || !strings.Contains(err.Error(), "node is not installed") {
		t.Fatalf("Available() = %v, want an error naming node", err)
	}
}
