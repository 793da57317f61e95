package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// eval --edges reads a file with the columns and delimiter the store's
// files were imported with (recorded at import), so a three-column file
// needs no --rel-col again; a flag given still wins; a store without the
// record keeps import's defaults.
func TestEvalEdgesUseImportColumns(t *testing.T) {
	dir, cfg := edgeSetsFixture(t, `edge_roles = ["train", "valid", "test"]`)
	if code, _, errOut := run(t, "train", "--config", cfg, "--quiet"); code != 0 {
		t.Fatalf("train: %s", errOut)
	}
	test := filepath.Join(dir, "test.txt")
	code, withFlag, errOut := run(t, "eval", "--config", cfg, "--edges", test, "--rel-col", "1")
	if code != 0 {
		t.Fatalf("eval --rel-col 1: exit %d\n%s", code, errOut)
	}
	code, out, errOut := run(t, "eval", "--config", cfg, "--edges", test)
	if code != 0 || out != withFlag {
		t.Errorf("eval without --rel-col (the import had --rel-col 1): exit %d\n%s\n%s\nwant\n%s", code, errOut, out, withFlag)
	}
	// A flag still wins: relations read from column 2 are unknown names.
	code, _, errOut = run(t, "eval", "--config", cfg, "--edges", test, "--rel-col", "2", "--rhs-col", "1")
	if code != 1 || !strings.Contains(errOut, "--lhs-col 0 --rel-col 2 --rhs-col 1 --delimiter tab") {
		t.Errorf("eval with other columns given: exit %d\n%s", code, errOut)
	}
	// The same edges, comma-separated, imported so: eval reads commas.
	csvDir := t.TempDir()
	for _, name := range []string{"train.txt", "valid.txt", "test.txt"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(csvDir, name), []byte(strings.ReplaceAll(string(data), "\t", ",")), 0o644)
	}
	cfgText, _ := os.ReadFile(cfg)
	csvCfg := filepath.Join(csvDir, "c.toml")
	os.WriteFile(csvCfg, cfgText, 0o644)
	if code, _, e := run(t, "import", "--quiet", "--config", csvCfg, "--rel-col", "1", "--delimiter", "comma",
		filepath.Join(csvDir, "train.txt"), filepath.Join(csvDir, "valid.txt"), filepath.Join(csvDir, "test.txt")); code != 0 {
		t.Fatalf("import --delimiter comma: %s", e)
	}
	if code, _, e := run(t, "train", "--config", csvCfg, "--quiet"); code != 0 {
		t.Fatalf("train: %s", e)
	}
	csvTest := filepath.Join(csvDir, "test.txt")
	code, withFlags, errOut := run(t, "eval", "--config", csvCfg, "--edges", csvTest, "--rel-col", "1", "--delimiter", "comma")
	if code != 0 {
		t.Fatalf("eval --delimiter comma: exit %d\n%s", code, errOut)
	}
	code, out, errOut = run(t, "eval", "--config", csvCfg, "--edges", csvTest)
	if code != 0 || out != withFlags {
		t.Errorf("eval of a comma-separated file without --delimiter: exit %d\n%s\n%s\nwant\n%s", code, errOut, out, withFlags)
	}

	// A store with no record (imported from Parquet, or before the record
	// existed) keeps import's defaults: no relation column.
	pqDir := t.TempDir()
	var pqFiles []string
	for _, name := range []string{"train.txt", "valid.txt", "test.txt"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var rows []cliEdge
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			f := strings.Split(line, "\t")
			rows = append(rows, cliEdge{f[0], &f[1], f[2]})
		}
		p := filepath.Join(pqDir, strings.TrimSuffix(name, ".txt")+".parquet")
		writeParquet(t, p, rows)
		pqFiles = append(pqFiles, p)
	}
	pqCfg := filepath.Join(pqDir, "c.toml")
	os.WriteFile(pqCfg, cfgText, 0o644)
	if code, _, e := run(t, append([]string{"import", "--quiet", "--config", pqCfg, "--lhs-col", "src", "--rel-col", "rel", "--rhs-col", "dst"}, pqFiles...)...); code != 0 {
		t.Fatalf("import from Parquet: %s", e)
	}
	if code, _, e := run(t, "train", "--config", pqCfg, "--quiet"); code != 0 {
		t.Fatalf("train: %s", e)
	}
	code, _, errOut = run(t, "eval", "--config", pqCfg, "--edges", test)
	if code != 1 || !strings.Contains(errOut, "no relation column (--rel-col -1)") {
		t.Errorf("eval on a store with no record, without --rel-col: exit %d, want import's defaults\n%s", code, errOut)
	}
	if code, _, errOut = run(t, "eval", "--config", pqCfg, "--edges", test, "--rel-col", "1"); code != 0 {
		t.Errorf("eval on a store with no record, --rel-col 1: exit %d\n%s", code, errOut)
	}
}
