package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/internal/shared"
)

var atisFlags = []string{"--stream", "S0:943:sparse", "--stream", "S1:26:sparse", "--stream", "S2:129:sparse"}

// convertATIS converts ATIS train to Parquet with the CLI (small row
// groups, so that chunks span them).
func convertATIS(t *testing.T) (ctfPath, pqPath string) {
	t.Helper()
	ctfPath = shared.Need(t, "ctf", "atis", "atis.train.ctf")
	pqPath = filepath.Join(t.TempDir(), "atis.parquet")
	args := append([]string{"convert", ctfPath, pqPath, "--row-group-rows", "1000"}, atisFlags...)
	if code, _, errOut := run(t, args...); code != 0 {
		t.Fatalf("convert: code %d: %s", code, errOut)
	}
	return ctfPath, pqPath
}

func readOut(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := run(t, append(append([]string{"read"}, args...), atisFlags...)...)
	if code != 0 {
		t.Fatalf("read %v: code %d: %s", args, code, errOut)
	}
	return out
}

// TestReadParquetSameAsCTF: `read` gives the same jsonl for ATIS as CTF
// and as the Parquet file convert made, for several randomizers, worker
// counts and chunkings.
func TestReadParquetSameAsCTF(t *testing.T) {
	ctfPath, pqPath := convertATIS(t)
	for _, extra := range [][]string{
		{"--randomize", "window", "--chunk-sequences", "64", "--window-chunks", "8", "--seed", "5", "--epochs", "2"},
		{"--randomize", "cntk", "--chunk-sequences", "300", "--workers", "3", "--rank", "2", "--mb", "512"},
		{"--randomize", "none", "--chunk-sequences", "100", "--epoch-size", "20000", "--epochs", "3", "--workers", "2", "--rank", "0"},
		{"--randomize", "window", "--window-samples", "3000", "--chunk-sequences", "10", "--mb", "64*3:1000", "--epochs", "2"},
	} {
		want := readOut(t, append([]string{ctfPath}, extra...)...)
		got := readOut(t, append([]string{pqPath}, extra...)...)
		if got != want || len(want) == 0 {
			t.Errorf("%v: Parquet read differs from CTF (%d vs %d bytes)", extra, len(got), len(want))
		}
	}
}

// TestReadParquetResume: a state written while reading the Parquet corpus
// resumes it to give the rest of the uninterrupted run.
func TestReadParquetResume(t *testing.T) {
	_, pqPath := convertATIS(t)
	st := filepath.Join(t.TempDir(), "st.json")
	base := []string{pqPath, "--chunk-sequences", "64", "--seed", "9", "--epochs", "2", "--mb", "700"}
	all := strings.SplitAfter(readOut(t, base...), "\n")
	first := readOut(t, append(base, "--max-minibatches", "40", "--state-out", st)...)
	rest := readOut(t, append(base, "--state-in", st)...)
	if first+rest != strings.Join(all, "") {
		t.Fatalf("interrupted and resumed run differs from the uninterrupted one")
	}
}

// TestConvertRoundTripCLI: CTF -> Parquet -> CTF reads as the original,
// with the streams taken from the Parquet file's metadata.
func TestConvertRoundTripCLI(t *testing.T) {
	ctfPath, pqPath := convertATIS(t)
	back := filepath.Join(t.TempDir(), "back.ctf")
	code, _, errOut := run(t, "convert", pqPath, back)
	if code != 0 || !strings.Contains(errOut, "streams inferred") || !strings.Contains(errOut, "wrote 4978 sequences") {
		t.Fatalf("convert back: code %d: %s", code, errOut)
	}
	args := []string{"--randomize", "window", "--chunk-sequences", "50", "--seed", "1"}
	if a, b := readOut(t, append([]string{ctfPath}, args...)...), readOut(t, append([]string{back}, args...)...); a != b {
		t.Fatal("the round trip changed the minibatches")
	}
}

// TestConvertAtomic: a conversion that fails leaves OUT as it was and no
// temporary file.
func TestConvertAtomic(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.ctf")
	os.WriteFile(in, []byte("1 |x 1 2\n2 |x 3 oops\n"), 0o644)
	out := filepath.Join(dir, "out.parquet")
	os.WriteFile(out, []byte("old"), 0o644)
	code, _, errOut := run(t, "convert", in, out, "--stream", "x:2")
	if code != 1 || !strings.Contains(errOut, "in.ctf:2:") {
		t.Errorf("code %d, stderr %q: want 1 and the bad line named", code, errOut)
	}
	if b, _ := os.ReadFile(out); string(b) != "old" {
		t.Errorf("OUT was changed by a failed conversion: %q", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("files left: %v", ents)
	}
	if code, _, _ := run(t, "convert", in, in, "--stream", "x:2"); code != 2 {
		t.Errorf("IN = OUT: code %d, want 2", code)
	}
}

// TestInspectParquet: inspect describes a Parquet corpus: format, row
// groups, streams from the metadata, sequences and samples.
func TestInspectParquet(t *testing.T) {
	_, pqPath := convertATIS(t)
	code, m, errOut := inspectJSON(t, pqPath)
	if code != 0 {
		t.Fatalf("code %d: %s", code, errOut)
	}
	samples := m["samples"].(map[string]any)
	if m["format"] != "parquet" || m["row_groups"] != 5.0 || m["sequences"] != 4978.0 || samples["S1"] != 4978.0 ||
		m["flags"] != strings.Join([]string{"--stream S0:943:sparse", "--stream S1:26:sparse", "--stream S2:129:sparse"}, " ") {
		b, _ := json.Marshal(m)
		t.Errorf("report %s", b)
	}
}

// TestReadParquetRefusesCTFState: a state saved on the CTF file is refused
// on its Parquet copy (another file), naming what differs.
func TestReadParquetRefusesCTFState(t *testing.T) {
	ctfPath, pqPath := convertATIS(t)
	st := filepath.Join(t.TempDir(), "st.json")
	readOut(t, ctfPath, "--chunk-sequences", "64", "--max-minibatches", "3", "--state-out", st)
	code, _, errOut := run(t, append([]string{"read", pqPath, "--chunk-sequences", "64", "--state-in", st}, atisFlags...)...)
	if code != 1 || !strings.Contains(errOut, "corpus.format") {
		t.Errorf("code %d, stderr %q: want the state refused, naming corpus.format", code, errOut)
	}
}

// TestParquetDataErrors: read and inspect of a Parquet corpus whose rows
// do not fit the --stream flags fail with exit code 1 and name the row
// group, row and column.
func TestParquetDataErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.ctf")
	os.WriteFile(in, []byte("1 |x 1 2\n2 |x 3 4\n"), 0o644)
	pq := filepath.Join(dir, "c.parquet")
	if code, _, errOut := run(t, "convert", in, pq, "--stream", "x:2"); code != 0 {
		t.Fatalf("convert: %d %s", code, errOut)
	}
	const want = `row group 0, row 0, column "x": sample 0 has 2 values; the stream's dimension is 1`
	if code, _, errOut := run(t, "read", pq, "--stream", "x:1"); code != 1 || !strings.Contains(errOut, want) {
		t.Errorf("read: code %d, stderr %q", code, errOut)
	}
	code, out, _ := run(t, "inspect", pq, "--stream", "x:1")
	if code != 1 || !strings.Contains(out, "FAILED") || !strings.Contains(out, want) {
		t.Errorf("inspect: code %d, stdout %q", code, out)
	}
	if code, _, errOut := run(t, "read", pq, "--stream", "y:1"); code != 1 || !strings.Contains(errOut, `column "y": no such column in the file`) {
		t.Errorf("read of a missing column: code %d, stderr %q", code, errOut)
	}
}

// TestParquetRefusesCTFOnlyFlags: a flag that only means something for
// CTF is a usage error on a Parquet corpus, not silently ignored.
func TestParquetRefusesCTFOnlyFlags(t *testing.T) {
	_, pqPath := convertATIS(t)
	if code, _, errOut := run(t, "inspect", pqPath, "--line-mode"); code != 2 || !strings.Contains(errOut, "Parquet") {
		t.Errorf("inspect --line-mode: code %d, stderr %q", code, errOut)
	}
}
