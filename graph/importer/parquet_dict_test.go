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

// Dictionary-encoded entity columns reach pass B as dictionary indexes
// (parquet_dict.go). These tests ask that the store is still the one the
// same edges give as text, however the dictionaries change, fall back to
// plain pages, hold bad values, or meet names of text files.

// dictConfig has two entity types and three relations, two of them
// between different types, so that the values of one dictionary are
// looked up in different entity dictionaries.
func dictConfig(t testing.TB, dir string, sets int) *config.Config {
	return dictConfigTypes(t, dir, sets, 2)
}

// dictConfigTypes is dictConfig with one entity type (n) when types is 1.
func dictConfigTypes(t testing.TB, dir string, sets, types int) *config.Config {
	t.Helper()
	var paths []string
	for i := range sets {
		paths = append(paths, fmt.Sprintf("%q", filepath.Join(dir, fmt.Sprintf("s%d", i))))
	}
	doc := fmt.Sprintf(`entity_path = %q
edge_paths = [%s]
checkpoint_path = "c"
seed = 5
[entities.n]
num_partitions = 2
[entities.m]
num_partitions = 2
[[relations]]
name = "a"
lhs = "n"
rhs = "m"
[[relations]]
name = "b"
lhs = "m"
rhs = "n"
[[relations]]
name = "c"
lhs = "n"
rhs = "n"
`, filepath.Join(dir, "e"), strings.Join(paths, ", "))
	if types == 1 {
		doc = strings.ReplaceAll(strings.ReplaceAll(doc, `"m"`, `"n"`), "[entities.m]\nnum_partitions = 2\n", "")
	}
	c, err := config.Parse([]byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type pqDictEdge struct {
	Src *string `parquet:"src,optional,dict"`
	Rel string  `parquet:"rel,dict"`
	Dst *string `parquet:"dst,optional,dict"`
}

// dictEdge returns edge i of the tests: names from a range that moves with
// i (so that each row group's dictionary differs from the last and new
// entities keep coming), a pool of names that recur in every row group,
// the same name on both sides, and a few bad values: nulls, empty
// strings, and a name that is not UTF-8 (twice in a row group, and beside
// a new valid name, which must then be added by the next row that has it);
// bad values only in rows 1000-1999, 3000-3999..., so that some row groups
// have none (parquet_fast.go).
func dictEdge(i int) pqDictEdge {
	s := func(x string) *string { return &x }
	pool := []string{"x", "yy", "a-name-longer-than-8", "z", "x2"}
	src := s(fmt.Sprintf("e%d", i/3))
	dst := s(pool[i%len(pool)])
	if i%4 == 1 {
		dst = s(fmt.Sprintf("e%d", i/5+7))
	}
	if i%9 == 4 {
		dst = src
	}
	if (i/1000)%2 == 0 { // rows 0-999, 2000-2999, ...: no bad value
		return pqDictEdge{src, []string{"a", "b", "c"}[i%3], dst}
	}
	switch i % 101 {
	case 10:
		src = nil
	case 20:
		dst = nil
	case 30:
		src = s("")
	case 40, 41:
		dst = s("bad\xff")
		src = s(fmt.Sprintf("new%d", i))
	case 42:
		src = s(fmt.Sprintf("new%d", i-2))
	}
	return pqDictEdge{src, []string{"a", "b", "c"}[i%3], dst}
}

func dictEdgesText(from, to int) string {
	var b strings.Builder
	field := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	for i := from; i < to; i++ {
		e := dictEdge(i)
		fmt.Fprintf(&b, "%s\t%s\t%s\n", field(e.Src), e.Rel, field(e.Dst))
	}
	return b.String()
}

func dictEdges(from, to int) []pqDictEdge {
	var rows []pqDictEdge
	for i := from; i < to; i++ {
		rows = append(rows, dictEdge(i))
	}
	return rows
}

// writePQOpts writes rows with parquet-go and the given options.
func writePQOpts[T any](t testing.TB, path string, rows []T, opts ...parquet.WriterOption) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[T](f, opts...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// pageEncodings returns, for column col of every row group, whether it
// has dictionary-encoded pages and plain pages.
func pageEncodings(t *testing.T, path string, col int) (dict, plain []bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	pf, err := parquet.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	for _, rg := range pf.RowGroups() {
		pages := rg.ColumnChunks()[col].Pages()
		var d, p bool
		for {
			pg, err := pages.ReadPage()
			if err != nil {
				break
			}
			if pg.Dictionary() != nil {
				d = true
			} else {
				p = true
			}
		}
		pages.Close()
		dict, plain = append(dict, d), append(plain, p)
	}
	return dict, plain
}

// Text files before and after a Parquet file of string ids in one import:
// whether the Parquet file's dictionaries change with each row group, or
// outgrow their size limit and fall back to plain pages in the middle of
// a column chunk, the store equals that of the same edges as three text
// files, bad rows (nulls, empty strings, names that are not UTF-8) skipped
// at the same ordinals.
func TestParquetDictionaryMatchesTSV(t *testing.T) {
	const n = 3000
	for _, tc := range []struct {
		name  string
		opts  []parquet.WriterOption
		types int // entity types
	}{
		{"row groups", []parquet.WriterOption{parquet.MaxRowsPerRowGroup(700), parquet.PageBufferSize(512)}, 2},
		{"plain fallback", []parquet.WriterOption{parquet.MaxRowsPerRowGroup(1500), parquet.PageBufferSize(256), parquet.DictionaryMaxBytes(1024)}, 2},
		{"one entity type", []parquet.WriterOption{parquet.MaxRowsPerRowGroup(700), parquet.PageBufferSize(512)}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var snaps []map[string][]byte
			var skipped []int
			for _, pq := range []bool{false, true} {
				dir := t.TempDir()
				c := dictConfigTypes(t, dir, 3, tc.types)
				if got := len(c.EntityTypes()); got != tc.types {
					t.Fatalf("%d entity types", got)
				}
				a, b, mid := filepath.Join(dir, "a.tsv"), filepath.Join(dir, "b.tsv"), filepath.Join(dir, "mid.tsv")
				os.WriteFile(a, []byte(dictEdgesText(0, 400)), 0o644)
				os.WriteFile(b, []byte(dictEdgesText(n-300, n+400)), 0o644)
				if pq {
					mid = filepath.Join(dir, "mid.parquet")
					writePQOpts(t, mid, dictEdges(200, n), tc.opts...)
					if tc.name == "plain fallback" {
						d, p := pageEncodings(t, mid, 0)
						if !d[0] || !p[0] {
							t.Fatalf("row group 0 of src: dictionary pages %v, plain pages %v; want both", d[0], p[0])
						}
					}
				} else {
					os.WriteFile(mid, []byte(dictEdgesText(200, n)), 0o644)
				}
				o := DefaultOptions()
				o.RelCol, o.RhsCol = 1, 2
				o.MaxErrors = 10000
				rep, err := Import(context.Background(), c, o, []string{a, mid, b})
				if err != nil {
					t.Fatalf("parquet %v: %v", pq, err)
				}
				if rep.EdgeSets[1].Parquet != pq {
					t.Fatalf("parquet %v: edge set 1: %+v", pq, rep.EdgeSets[1])
				}
				skipped = append(skipped, rep.Skipped)
				snaps = append(snaps, snapshot(t, c, ""))
			}
			if skipped[0] != skipped[1] || skipped[0] < 40 {
				t.Fatalf("rows skipped: text %d, Parquet %d", skipped[0], skipped[1])
			}
			sameStores(t, snaps[0], snaps[1])
		})
	}
}

// Pass A hands the rows of dictionary pages to pass B as dictionary
// indexes, no name or hash per row; the rows of a column chunk's plain
// pages (after the writer's dictionary outgrew its limit) carry their
// names.
func TestParquetDictionaryRowsAsIndexes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "in.parquet")
	writePQOpts(t, path, dictEdges(0, 1500), parquet.PageBufferSize(256), parquet.DictionaryMaxBytes(1024))
	c := dictConfig(t, dir, 1)
	o := DefaultOptions()
	o.RelCol, o.RhsCol = 1, 2
	res := decodeFirstRowGroup(t, c, o, path)
	var byIndex, byName, rows int
	record := func(e *pending) {
		switch {
		case e.fault != nil:
		case e.ld != nil && e.lf == nil && e.hl == 0:
			byIndex++
		case e.ld == nil && e.lf != nil:
			byName++
		default:
			t.Fatalf("row %d: dictionary %v, name %q", e.lineNo, e.ld != nil, e.lf)
		}
	}
	for _, b := range res {
		if len(b.fast) == 0 { // row records only
			for i := range b.batch {
				rows++
				record(&b.batch[i])
			}
			continue
		}
		for _, f := range b.fast { // short form (parquet_fast.go)
			rows++
			if f.rel == recRow {
				record(&b.batch[f.l])
			} else if b.kind == fastDict {
				byIndex++
			}
		}
	}
	if rows != 1500 || byIndex == 0 || byName == 0 {
		t.Fatalf("%d rows: %d by dictionary index, %d by name", rows, byIndex, byName)
	}
}

// decodeFirstRowGroup runs pass A on row group 0 of the file at path and
// returns its batches.
func decodeFirstRowGroup(t *testing.T, c *config.Config, o Options, path string) []*pqBatch {
	t.Helper()
	p := newParser(c, &o)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	pf, err := openParquet(f, fi.Size(), path)
	if err != nil {
		t.Fatal(err)
	}
	cols, err := p.parquetColumns(pf, path)
	if err != nil {
		t.Fatal(err)
	}
	rgs := pf.RowGroups()
	q := &pqFile{rgStart: []int64{0}, file: f, size: fi.Size(), meta: pf.Metadata()}
	res := make(chan *pqBatch, 100)
	if !p.decodeRowGroup(q, 0, rgs[0], &cols, make(batchPool, 4), res, make(chan struct{})) {
		t.Fatal("the row group was not decoded")
	}
	close(res)
	var out []*pqBatch
	for b := range res {
		if b.err != nil {
			t.Fatal(b.err)
		}
		out = append(out, b)
	}
	return out
}
