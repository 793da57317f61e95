package importer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/batchprep/batchprep/graph/config"
)

// Batches without bad rows reach pass B in short form (parquet_fast.go).

type pqDictWEdge struct {
	Src    string  `parquet:"src,dict"`
	Rel    string  `parquet:"rel,dict"`
	Dst    string  `parquet:"dst,dict"`
	Weight float32 `parquet:"weight"`
}

// A file whose entity columns are both dictionary-encoded, with weights,
// over three relations and entity types: the store is the TSV import's
// and reads back as written, the batches having gone in short form.
func TestParquetShortFormMatchesTSV(t *testing.T) {
	var snaps []map[string][]byte
	for _, format := range []string{"tsv", "parquet"} {
		dir := t.TempDir()
		c := kgConfig(t, dir, 3, 1)
		tsv := filepath.Join(dir, "in.tsv")
		ref := genKG(t, tsv, 3000, 13, false)
		in, o := tsv, kgOptions()
		if format == "parquet" {
			rows := make([]pqDictWEdge, len(ref))
			for i, e := range ref {
				rows[i] = pqDictWEdge{e.lhs, e.rel, e.rhs, e.weight}
			}
			in = filepath.Join(dir, "in.parquet")
			writePQ(t, in, rows, 700)
			o = DefaultOptions()
			o.LhsName, o.RelName, o.RhsName, o.WeightName = "src", "rel", "dst", "weight"
			for _, b := range decodeFirstRowGroup(t, c, o, in) {
				if b.kind != fastDict || len(b.fast) == 0 || len(b.batch) != 0 {
					t.Fatalf("row group 0: a batch of %d rows in short form (kind %d), %d rows in records", len(b.fast), b.kind, len(b.batch))
				}
			}
		}
		snaps = append(snaps, importAndSnapshot(t, c, o, in, format, 3000, ref))
	}
	sameStores(t, snaps[0], snaps[1])
}

type pqMixedKinds struct {
	Src int64  `parquet:"src"`
	Rel string `parquet:"rel,dict"`
	Dst string `parquet:"dst,dict"`
}

// Which batches go in short form: those whose entity columns are both
// dictionary indexes or both integer ids. Their rows with a bad value, or
// a name from a plain page, are kept as row records in their place.
func TestParquetShortFormChoice(t *testing.T) {
	dir := t.TempDir()
	c := dictConfig(t, dir, 1)
	o := DefaultOptions()
	o.RelCol, o.RhsCol = 1, 2
	check := func(name, path string, c *config.Config, kind, rows, records int) {
		t.Helper()
		got, recs := 0, 0
		for _, b := range decodeFirstRowGroup(t, c, o, path) {
			if b.kind != kind || (kind == 0) != (len(b.fast) == 0) {
				t.Errorf("%s: a batch of kind %d (%d rows in short form), want kind %d", name, b.kind, len(b.fast), kind)
			}
			if kind == 0 {
				got += len(b.batch)
				continue
			}
			got += len(b.fast)
			for _, f := range b.fast {
				if f.rel == recRow {
					if e := &b.batch[f.l]; e.lineNo-1 < 0 || e.ld != nil && e.fault == nil {
						t.Errorf("%s: record of row %d", name, e.lineNo)
					}
					recs++
				}
			}
		}
		if got != rows || recs != records && records >= 0 || records < 0 && recs == 0 {
			t.Errorf("%s: %d rows, %d records; want %d, %d", name, got, recs, rows, records)
		}
	}
	for _, tc := range []struct {
		name    string
		rows    []pqDictEdge
		opts    []parquet.WriterOption
		records int // -1: some
	}{
		{"clean", dictEdges(0, 900), nil, 0},
		{"bad rows", dictEdges(900, 1100), nil, 3}, // rows 1020 and 1030 (nulls), 1040 (an empty name)
		{"plain pages", dictEdges(0, 900), []parquet.WriterOption{parquet.PageBufferSize(256), parquet.DictionaryMaxBytes(512)}, -1},
	} {
		path := filepath.Join(dir, tc.name+".parquet")
		writePQOpts(t, path, tc.rows, tc.opts...)
		check(tc.name, path, c, fastDict, len(tc.rows), tc.records)
	}
	path := filepath.Join(dir, "mixed.parquet")
	writePQ(t, path, []pqMixedKinds{{1, "a", "x"}, {2, "b", "y"}}, 10)
	check("integer and string ids", path, c, 0, 2, 0)

	ic := typedIntConfig(t, dir, 1)
	var rows []pqIntRel
	for i := range 500 {
		rows = append(rows, intEdge(i))
	}
	path = filepath.Join(dir, "int.parquet")
	writePQ(t, path, rows, 500)
	check("integer ids", path, ic, fastInt, 500, 0)
}

// A batch in short form may still hold bad rows that only pass B can
// tell: a name that is not UTF-8 is skipped at each of its rows, the
// rows' other entities not added (nor their ids guessed) until a good row
// adds them, as from text.
func TestParquetShortFormBadName(t *testing.T) {
	var rows []pqDictEdge
	var text strings.Builder
	for i := range 1200 {
		src, dst := fmt.Sprintf("u%d", i%97), fmt.Sprintf("v%d", i%89)
		switch i % 50 {
		case 7:
			dst = "bad\xfe"
			src = fmt.Sprintf("w%d", i%3) // new names beside the bad one,
		case 20:
			src = fmt.Sprintf("w%d", i%3) // added by a later good row
		}
		rel := []string{"a", "b", "c"}[i%3]
		rows = append(rows, pqDictEdge{&src, rel, &dst})
		fmt.Fprintf(&text, "%s\t%s\t%s\n", src, rel, dst)
	}
	var snaps []map[string][]byte
	for _, types := range []int{1, 2} {
		for _, format := range []string{"tsv", "parquet"} {
			dir := t.TempDir()
			c := dictConfigTypes(t, dir, 1, types)
			o := DefaultOptions()
			o.RelCol, o.RhsCol = 1, 2
			o.MaxErrors = 1000
			in := filepath.Join(dir, "in."+format)
			if format == "tsv" {
				os.WriteFile(in, []byte(text.String()), 0o644)
			} else {
				writePQ(t, in, rows, 600)
				for _, b := range decodeFirstRowGroup(t, c, o, in) {
					if b.kind != fastDict {
						t.Fatalf("a batch in row records")
					}
				}
			}
			rep, err := Import(context.Background(), c, o, []string{in})
			if err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			if rep.Skipped != 24 {
				t.Errorf("%s, %d types: %d rows skipped, want 24", format, types, rep.Skipped)
			}
			snaps = append(snaps, snapshot(t, c, ""))
		}
		sameStores(t, snaps[len(snaps)-2], snaps[len(snaps)-1])
	}
}

// The entity table is sized from the first row group's dictionaries
// before its first batch is looked up: a file of 3000 entities in one row
// group is imported without the table ever growing.
func TestParquetReserveFromDictionaries(t *testing.T) {
	dir := t.TempDir()
	c := dictConfigTypes(t, dir, 1, 1)
	var rows []pqDictEdge
	for i := range 20000 {
		src, dst := fmt.Sprintf("n%d", i%3000), fmt.Sprintf("n%d", (i*7+1)%3000)
		rows = append(rows, pqDictEdge{&src, []string{"a", "b", "c"}[i%3], &dst})
	}
	path := filepath.Join(dir, "in.parquet")
	writePQ(t, path, rows, 20000)
	o := DefaultOptions()
	o.RelCol, o.RhsCol = 1, 2
	p := newParser(c, &o)
	fe, err := parseFile(context.Background(), p, path, 0, 0, &o)
	if err != nil {
		t.Fatal(err)
	}
	d := p.dicts["n"]
	if fe.len() != 20000 || len(d.names) != 3000 || d.grows != 0 {
		t.Fatalf("%d edges, %d entities; the table grew %d times", fe.len(), len(d.names), d.grows)
	}
}
