package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/internal/duckdbtest"
)

// TestInspectParquetLeftOut: inspect of a Parquet file DuckDB wrote, with
// a VARCHAR[] and a DECIMAL column beside a stream, lists both columns as
// left out of the inferred flags with the reason read gives when either
// is named as a stream, in text and in JSON.
func TestInspectParquetLeftOut(t *testing.T) {
	duckdbtest.Need(t)
	p := filepath.Join(t.TempDir(), "duck.parquet")
	duckdbtest.Exec(t, "copy (select [[i::FLOAT, 1::FLOAT]] as d, ['a', 'b'] as tags, [1.5, 2.5] as price from range(3) t(i)) to "+duckdbtest.Quote(p)+" (format parquet)")
	code, out, errOut := run(t, "inspect", p)
	if code != 0 || !strings.Contains(out, "--stream d:2") {
		t.Fatalf("inspect: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, js, _ := run(t, "inspect", p, "--format", "json")
	var rep inspectReport
	if err := json.Unmarshal([]byte(js), &rep); code != 0 || err != nil {
		t.Fatalf("inspect --format json: code %d, %v", code, err)
	}
	if len(rep.LeftOut) != 2 {
		t.Fatalf("columns_left_out %+v, want tags and price", rep.LeftOut)
	}
	for i, col := range []string{"tags", "price"} {
		code, _, readErr := run(t, "read", p, "--stream", col+":2")
		_, why, ok := strings.Cut(strings.TrimSpace(readErr), fmt.Sprintf("column %q: ", col))
		if code != 1 || !ok {
			t.Fatalf("read --stream %s:2: code %d, stderr %q", col, code, readErr)
		}
		if line := fmt.Sprintf("column %q %s\n", col, why); !strings.Contains(out, line) {
			t.Errorf("inspect does not say %q:\n%s", line, out)
		}
		if l := rep.LeftOut[i]; l.Column != col || l.Reason != why {
			t.Errorf("JSON left out %d: %+v, want %s: %s", i, l, col, why)
		}
	}
}

// TestParquetLZ4Commands: a corpus DuckDB wrote with COMPRESSION lz4 (the
// LZ4_RAW codec), of numbers that compress less than threefold, is read
// by inspect, read and convert alike; each failed with "a damaged page:
// it cannot be decoded" before internal/pqlz4.
func TestParquetLZ4Commands(t *testing.T) {
	duckdbtest.Need(t)
	dir := t.TempDir()
	p := filepath.Join(dir, "lz4.parquet")
	duckdbtest.Exec(t, `copy (select list_transform(range(1 + i % 3), lambda j: [((i * 1103515245 + j * 12345) % 16777213)::FLOAT,
	    ((i * 69069 + j) % 16777199)::FLOAT]) as d from range(3000) t(i)) to `+duckdbtest.Quote(p)+" (format parquet, compression lz4)")
	for _, args := range [][]string{
		{"inspect", p},
		{"read", p, "--stream", "d:2"},
		{"convert", p, filepath.Join(dir, "out.ctf")},
	} {
		if code, _, errOut := run(t, args...); code != 0 {
			t.Errorf("%s: code %d, stderr %q", args[0], code, errOut)
		}
	}
}
