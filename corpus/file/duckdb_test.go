package file

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	"github.com/batchprep/batchprep/corpus/ctf"
	"github.com/batchprep/batchprep/corpus/parquet"
	"github.com/batchprep/batchprep/internal/duckdbtest"
)

// TestDuckDBReadsConvertedATIS: DuckDB reads the Parquet file ToParquet
// writes from ATIS with the CTF file's counts and values.
func TestDuckDBReadsConvertedATIS(t *testing.T) {
	duckdbtest.Need(t)
	ctfPath, pqPath := atisParquet(t)
	r, err := ctf.Open(ctfPath, ctf.Config{Streams: atisStreams})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s := r.Summary()
	q := "select count(*), sum(len(S0)), sum(len(S1)), sum(len(S2)), count(distinct id) from read_parquet(" + duckdbtest.Quote(pqPath) + ")"
	got := duckdbtest.Query(t, q)
	want := []string{strconv.Itoa(s.Sequences), fmt.Sprint(s.Samples[0]), fmt.Sprint(s.Samples[1]), fmt.Sprint(s.Samples[2]), strconv.Itoa(s.Sequences)}
	if strings.Join(got[0], " ") != strings.Join(want, " ") {
		t.Errorf("DuckDB counts %v, want %v", got[0], want)
	}
	ch, err := r.LoadChunk(0)
	if err != nil {
		t.Fatal(err)
	}
	rows := duckdbtest.Query(t, "select id, S0, S1, S2 from read_parquet("+duckdbtest.Quote(pqPath)+") limit 3")
	for i, row := range rows {
		if row[0] != ch.IDs[i] {
			t.Errorf("row %d: id %s, want %s", i, row[0], ch.IDs[i])
		}
		for s := range atisStreams {
			d := ch.Streams[s]
			a, b := d.SeqStart[i], d.SeqStart[i+1]
			if want := listText(d.Indices[d.RowStart[a]:d.RowStart[b]]); row[1+s] != want {
				t.Errorf("row %d stream %s: %s, want %s", i, atisStreams[s].Name, row[1+s], want)
			}
		}
	}
}

// TestDuckDBReadsDenseAndValues: DuckDB reads a dense stream and a sparse
// stream with values and several entries per sample as ToParquet writes
// them (lists of lists, with a NAME_values column).
func TestDuckDBReadsDenseAndValues(t *testing.T) {
	duckdbtest.Need(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in.ctf")
	if err := os.WriteFile(in, []byte("7 |d 1.5 2 |s 0:0.25 3:1\n7 |d -1 0 |s 2:4\n9 |d 3 4 |s 1:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	streams := []corpus.Stream{{Name: "d", Dim: 2}, {Name: "s", Dim: 4, Sparse: true}}
	r, err := Open(in, ctf.Config{Streams: streams})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	out := filepath.Join(dir, "out.parquet")
	st, err := ToParquet(r, out, parquet.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Forms[1] != parquet.SparseLists {
		t.Fatalf("sparse stream written %s, want sparse lists", st.Forms[1])
	}
	rows := duckdbtest.Query(t, "select id, d, s, s_values from read_parquet("+duckdbtest.Quote(out)+") order by id")
	want := [][]string{
		{"7", "[[1.5, 2.0], [-1.0, 0.0]]", "[[0, 3], [2]]", "[[0.25, 1.0], [4.0]]"},
		{"9", "[[3.0, 4.0]]", "[[1]]", "[[1.0]]"},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		// DuckDB may print whole floats without ".0".
		alt := strings.ReplaceAll(fmt.Sprint(want), ".0", "")
		if strings.ReplaceAll(fmt.Sprint(rows), ".0", "") != alt {
			t.Errorf("DuckDB rows %v, want %v", rows, want)
		}
	}
}

func listText(a []int32) string {
	parts := make([]string, len(a))
	for i, v := range a {
		parts[i] = strconv.Itoa(int(v))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
