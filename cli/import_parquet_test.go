package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
)

type cliEdge struct {
	Src string  `parquet:"src,dict"`
	Rel *string `parquet:"rel,optional"`
	Dst string  `parquet:"dst"`
}

type cliPair struct {
	From int64 `parquet:"from"`
	To   int64 `parquet:"to"`
}

func writeParquet[T any](t *testing.T, path string, rows []T) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[T](f, parquet.MaxRowsPerRowGroup(100))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// The importFixture edges as Parquet: columns chosen by name give the same
// store as the TSV file with columns chosen by index; a null relation is a
// bad row named by row group, row and column.
func TestImportParquet(t *testing.T) {
	dir, cfgPath, tsv := importFixture(t)
	text, _ := os.ReadFile(tsv)
	var rows []cliEdge
	for _, line := range strings.Split(strings.TrimSpace(string(text)), "\n")[1:] {
		f := strings.Split(line, "\t")
		rows = append(rows, cliEdge{f[0], &f[1], f[2]})
	}
	pq := filepath.Join(dir, "edges.parquet")
	writeParquet(t, pq, rows)
	code, _, errOut := run(t, "import", "--config", cfgPath, "--lhs-col", "src", "--rel-col", "rel", "--rhs-col", "dst", pq)
	if code != 0 {
		t.Fatalf("code %d, stderr %s", code, errOut)
	}
	for _, want := range []string{"import: 500 edges in 1 edge set,", "78 entities", "entities: node 78", "from " + pq} {
		if !strings.Contains(errOut, want) {
			t.Errorf("summary lacks %q:\n%s", want, errOut)
		}
	}
	cfg, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	st, err := edgestore.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Verify(); err != nil {
		t.Fatal(err)
	}
	st.Close()

	rows[150].Rel = nil
	writeParquet(t, pq, rows)
	code, _, errOut = run(t, "import", "--config", cfgPath, "--lhs-col", "src", "--rel-col", "rel", "--rhs-col", "dst", pq)
	want := fmt.Sprintf(`%s: row group 1, row 150, column "rel": null value: the relation is null`, pq)
	if code == 0 || !strings.Contains(errOut, want) {
		t.Errorf("code %d, stderr %s; want an error with %q", code, errOut, want)
	}
	// Skipped within the budget, the null is counted as a bad row: a
	// Parquet file has rows, not lines.
	code, _, errOut = run(t, "import", "--config", cfgPath, "--lhs-col", "src", "--rel-col", "rel", "--rhs-col", "dst", "--max-errors", "1", pq)
	for _, want := range []string{"import: 499 edges in 1 edge set,", "1 bad row skipped", "(500 rows; 1 skipped)", "skipped rows by reason: null value 1"} {
		if code != 0 || !strings.Contains(errOut, want) {
			t.Errorf("code %d, summary lacks %q:\n%s", code, want, errOut)
		}
	}
	if strings.Contains(errOut, "line") {
		t.Errorf("the summary of a Parquet import speaks of lines:\n%s", errOut)
	}
	code, _, errOut = run(t, "import", "--config", cfgPath, "--lhs-col", "source", "--rhs-col", "dst", pq)
	if code == 0 || !strings.Contains(errOut, `no column "source" for the lhs entity (the file's columns: src, rel, dst)`) {
		t.Errorf("code %d, stderr %s; want the missing column named", code, errOut)
	}
	code, _, errOut = run(t, "import", "--config", cfgPath, "--lhs-col", "src", tsv)
	if code == 0 || !strings.Contains(errOut, "no column names") {
		t.Errorf("code %d, stderr %s; want an error saying text files have no column names", code, errOut)
	}
}

// A two-column Parquet file, no column flag: lhs is column 0 and rhs
// column 1, as for a two-column text edge list; --format parquet reads a
// file whatever its name.
func TestImportParquetTwoColumns(t *testing.T) {
	dir, cfgPath, _ := importFixture(t)
	in := filepath.Join(dir, "pairs.bin")
	var rows []cliPair
	for i := range 300 {
		rows = append(rows, cliPair{int64(i % 17), int64(i % 23)})
	}
	writeParquet(t, in, rows)
	code, _, errOut := run(t, "import", "--config", cfgPath, "--format", "parquet", in)
	if code != 0 || !strings.Contains(errOut, "import: 300 edges") || !strings.Contains(errOut, "entities: node 23") {
		t.Fatalf("code %d, stderr %s", code, errOut)
	}
	code, _, errOut = run(t, "import", "--config", cfgPath, "--format", "orc", in)
	if code != 2 || !strings.Contains(errOut, `--format "orc"`) {
		t.Errorf("code %d, stderr %s; want a usage error", code, errOut)
	}
}
