package importer

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// pqSeeds are small Parquet files of the shapes the importer reads.
func pqSeeds(f *testing.F) [][]byte {
	dir := f.TempDir()
	var out [][]byte
	add := func(write func(path string)) {
		p := filepath.Join(dir, "s.parquet")
		write(p)
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	add(func(p string) {
		writePQ(f, p, []pqEdge{{"a", "x", "b", 1}, {"b", "y", "a", 2}, {"a", "x", "c", 0.5}}, 2)
	})
	add(func(p string) { writePQ(f, p, []pqIntEdge{{1, 2}, {-3, 4}, {1, 4}}, 2) })
	s := "x"
	x := int64(7)
	add(func(p string) { writePQ(f, p, []pqNullable{{&x, &s, "b", nil}, {nil, nil, "", nil}}, 1) })
	// Dictionaries that fall back to plain pages in the middle of a column
	// chunk, nulls, empty and non-UTF-8 names (parquet_dict.go).
	add(func(p string) {
		writePQOpts(f, p, dictEdges(0, 240), parquet.MaxRowsPerRowGroup(120), parquet.PageBufferSize(128), parquet.DictionaryMaxBytes(256))
	})
	return out
}

// FuzzParseParquet feeds arbitrary bytes to the Parquet path of the
// importer, with columns chosen by name and by index: it must fail with an
// error or account for every row (rows = edges + bad rows), never panic.
func FuzzParseParquet(f *testing.F) {
	for _, b := range pqSeeds(f) {
		f.Add(b, true)
		f.Add(b, false)
	}
	in := filepath.Join(f.TempDir(), "f.parquet") // one per fuzzing process, which runs inputs one at a time
	f.Fuzz(func(t *testing.T, data []byte, byName bool) {
		if len(data) > 1<<16 {
			return
		}
		if err := os.WriteFile(in, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := twoRelConfig(t, true)
		o := DefaultOptions()
		o.MaxErrors = 1 << 30
		if byName {
			o.LhsName, o.RelName, o.RhsName, o.WeightName = "src", "rel", "dst", "w"
		} else {
			o.LhsCol, o.RhsCol, o.RelCol = 0, 1, -1
		}
		p := newParser(cfg, &o)
		fe, err := parseFile(context.Background(), p, in, 0, 0, &o)
		if err != nil {
			return
		}
		if fe.comments != 0 || fe.lines != fe.edgeLines || fe.edgeLines != int64(fe.len()+len(fe.bad)) {
			t.Fatalf("accounting: %d rows, %d edge lines, %d edges, %d bad", fe.lines, fe.edgeLines, fe.len(), len(fe.bad))
		}
	})
}
