package importer

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/batchprep/batchprep/graph/config"
	"github.com/batchprep/batchprep/graph/edgestore"
)

// pqEdge is a row of the string-id test files.
type pqEdge struct {
	Src    string  `parquet:"src,dict"`
	Rel    string  `parquet:"rel,dict"`
	Dst    string  `parquet:"dst"`
	Weight float32 `parquet:"weight"`
}

// writePQ writes rows with parquet-go, rowGroup rows per row group.
func writePQ[T any](t testing.TB, path string, rows []T, rowGroup int64) {
	t.Helper()
	writePQOpts(t, path, rows, parquet.MaxRowsPerRowGroup(rowGroup), parquet.PageBufferSize(512))
}

// snapshot reads every file of the store; the edge manifests are decoded
// and re-encoded without the source file they name, which must be src
// (unless src is empty: an import of several files).
func snapshot(t *testing.T, c *config.Config, src string) map[string][]byte {
	t.Helper()
	snap := map[string][]byte{}
	for _, d := range append([]string{c.EntityPath}, c.EdgePaths...) {
		ents, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(d, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if e.Name() == edgestore.EdgeManifestName {
				m, err := edgestore.DecodeEdgeManifest(b)
				if err != nil {
					t.Fatal(err)
				}
				if src != "" && m.Source != src {
					t.Fatalf("manifest source %q, want %q", m.Source, src)
				}
				// Where the edges came from and how the file was read
				// (text files record their columns) are the only
				// differences allowed.
				m.Source, m.SourceColumns = "SOURCE", nil
				b, _ = json.Marshal(m)
			}
			snap[filepath.Base(d)+"/"+e.Name()] = b
		}
	}
	return snap
}

// importAndSnapshot imports in (format "tsv" or "parquet") with c and o,
// checks the edge count and, for Parquet, that the store reads back as
// ref, and returns the store's snapshot.
func importAndSnapshot(t *testing.T, c *config.Config, o Options, in, format string, edges int64, ref []refEdge) map[string][]byte {
	t.Helper()
	rep, err := Import(context.Background(), c, o, []string{in})
	if err != nil {
		t.Fatalf("%s: %v", format, err)
	}
	if rep.EdgeSets[0].Edges != edges {
		t.Fatalf("%s: %d edges", format, rep.EdgeSets[0].Edges)
	}
	if format == "parquet" {
		if got := readAll(t, c)[0]; !reflect.DeepEqual(got, ref) {
			t.Fatalf("parquet round trip differs")
		}
	}
	return snapshot(t, c, in)
}

func sameStores(t *testing.T, a, b map[string][]byte) {
	t.Helper()
	if len(a) < 5 || len(a) != len(b) {
		t.Fatalf("stores have %d and %d files", len(a), len(b))
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			t.Errorf("%s differs between the text and the Parquet import", k)
		}
	}
}

// Invariants 1 and 4: a Parquet file of the same edges as a TSV file (string
// ids, several row groups, dictionary-encoded columns, weights) gives the
// same store, byte for byte.
func TestParquetMatchesTSV(t *testing.T) {
	var snaps []map[string][]byte
	for _, format := range []string{"tsv", "parquet"} {
		dir := t.TempDir()
		c := kgConfig(t, dir, 3, 1)
		tsv := filepath.Join(dir, "in.tsv")
		ref := genKG(t, tsv, 2000, 11, false)
		in, o := tsv, kgOptions()
		if format == "parquet" {
			rows := make([]pqEdge, len(ref))
			for i, e := range ref {
				rows[i] = pqEdge{e.lhs, e.rel, e.rhs, e.weight}
			}
			in = filepath.Join(dir, "in.parquet")
			writePQ(t, in, rows, 300)
			o = DefaultOptions()
			o.LhsName, o.RelName, o.RhsName, o.WeightName = "src", "rel", "dst", "weight"
		}
		snaps = append(snaps, importAndSnapshot(t, c, o, in, format, 2000, ref))
	}
	sameStores(t, snaps[0], snaps[1])
}

type pqIntEdge struct {
	Src int64 `parquet:"src"`
	Dst int32 `parquet:"dst,dict"` // integers in a dictionary: named once per value
}

// intConfig is one entity type n in 2 partitions, one relation r.
func intConfig(t testing.TB, dir string, dynamic bool) *config.Config {
	t.Helper()
	c, err := config.Parse([]byte(fmt.Sprintf("entity_path = %q\nedge_paths = [%q]\ncheckpoint_path = \"c\"\ndynamic_relations = %v\n[entities.n]\nnum_partitions = 2\n[[relations]]\nname = \"r\"\nlhs = \"n\"\nrhs = \"n\"\n",
		filepath.Join(dir, "e"), filepath.Join(dir, "s"), dynamic)), "toml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Integer ids (int64 and int32 columns, negative ones included) are the
// entities named by their decimal text, as in a text file; columns chosen
// by index work like names; the format is detected from the magic.
func TestParquetIntegerIDs(t *testing.T) {
	var snaps []map[string][]byte
	for _, format := range []string{"tsv", "parquet"} {
		dir := t.TempDir()
		c := intConfig(t, dir, false)
		var rows []pqIntEdge
		var b strings.Builder
		for i := range 1000 {
			e := pqIntEdge{int64(i*7%101) - 50, int32(i * 13 % 97)}
			rows = append(rows, e)
			fmt.Fprintf(&b, "%d\t%d\n", e.Src, e.Dst)
		}
		in := filepath.Join(dir, "in") // no extension: detected from the magic
		o := DefaultOptions()
		o.RhsCol = 1
		if format == "tsv" {
			os.WriteFile(in, []byte(b.String()), 0o644)
		} else {
			writePQ(t, in, rows, 128)
		}
		if _, err := Import(context.Background(), c, o, []string{in}); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		snaps = append(snaps, snapshot(t, c, in))
	}
	sameStores(t, snaps[0], snaps[1])
}

type pqNullable struct {
	Src *int64   `parquet:"src,optional"`
	Rel *string  `parquet:"rel,optional,dict"` // dictionary-encoded: relation ids are kept per value
	Dst string   `parquet:"dst"`
	W   *float64 `parquet:"w,optional"`
}

// Invariant 2 and the error rules: nulls, empty strings, unknown
// relations and non-finite weights are bad rows naming the row group, the
// row and the column; within the budget they are skipped and the good rows
// keep their ordinals (row numbers).
func TestParquetBadRows(t *testing.T) {
	dir := t.TempDir()
	c := intConfig(t, dir, false)
	i64 := func(x int64) *int64 { return &x }
	str := func(s string) *string { return &s }
	f64 := func(x float64) *float64 { return &x }
	rows := []pqNullable{
		{i64(1), str("r"), "2", f64(1)},
		{nil, str("r"), "2", f64(1)},        // row 1: null lhs
		{i64(1), str("r"), "", f64(1)},      // row 2: empty rhs
		{i64(1), str("q"), "2", f64(1)},     // row 3 (group 1): unknown relation
		{i64(1), str("r"), "3", nil},        // row 4: null weight
		{i64(1), str("r"), "3", f64(1e300)}, // row 5: not a float32
		{i64(2), nil, "3", f64(2)},          // row 6 (group 2): null relation
		{i64(2), str("r"), "1", f64(0.5)},   // good
	}
	in := filepath.Join(dir, "bad.parquet")
	writePQ(t, in, rows, 3)
	o := DefaultOptions()
	o.LhsName, o.RelName, o.RhsName, o.WeightName = "src", "rel", "dst", "w"
	_, err := Import(context.Background(), c, o, []string{in})
	var le *LineError
	if !errors.As(err, &le) || le.Parquet == nil {
		t.Fatalf("error %v, want a *LineError with a Parquet position", err)
	}
	want := fmt.Sprintf(`importer: %s: row group 0, row 1, column "src": null value: the lhs entity is null`, in)
	if le.Error() != want || le.Line != 2 {
		t.Fatalf("error\n%s (line %d)\nwant\n%s", le, le.Line, want)
	}
	o.MaxErrors = 6
	rep, err := Import(context.Background(), c, o, []string{in})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range rep.BadLines {
		got = append(got, fmt.Sprintf("%d/%d/%s/%s", e.Parquet.RowGroup, e.Parquet.Row, e.Parquet.Column, e.Reason))
	}
	wantBad := []string{"0/1/src/null value", "0/2/dst/empty field", "1/3/rel/unknown relation",
		"1/4/w/null value", "1/5/w/bad weight", "2/6/rel/null value"}
	if !reflect.DeepEqual(got, wantBad) {
		t.Fatalf("bad rows\n%q\nwant\n%q", got, wantBad)
	}
	s := rep.EdgeSets[0]
	if s.Lines != 8 || s.EdgeLines != 8 || s.Edges != 2 || s.Skipped != 6 {
		t.Fatalf("report %+v", s)
	}
	edges := readAll(t, c)[0]
	if len(edges) != 2 || edges[0].ordinal != 0 || edges[1].ordinal != 7 || edges[1].weight != 0.5 {
		t.Fatalf("edges %+v", edges)
	}
}

type pqFloatID struct {
	Src float64 `parquet:"src"`
	Dst string  `parquet:"dst"`
	Tag []int32 `parquet:"tag,list"`
}

// Column errors name the file, the column and what was wanted.
func TestParquetColumnErrors(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "f.parquet")
	writePQ(t, in, []pqFloatID{{1, "a", []int32{1}}}, 10)
	for _, tc := range []struct {
		set  func(o *Options)
		want string
	}{
		{func(o *Options) { o.LhsName, o.RhsName = "from", "dst" }, `no column "from" for the lhs entity (the file's columns: src, dst, tag)`},
		{func(o *Options) { o.LhsName, o.RhsName = "src", "dst" }, `column "src" holds floating-point numbers: the lhs entity needs a column of integers or strings`},
		{func(o *Options) { o.LhsName, o.RhsName = "dst", "tag" }, `column "tag" is a list or a group`},
		{func(o *Options) { o.LhsCol, o.RhsCol = 1, 5 }, `the rhs entity is column 5 but the file has 3 columns (src, dst, tag)`},
		{func(o *Options) { o.LhsName, o.RhsName, o.WeightName = "src", "dst", "dst" }, `both column "dst"`},
	} {
		c := intConfig(t, dir, false)
		o := DefaultOptions()
		tc.set(&o)
		_, err := Import(context.Background(), c, o, []string{in})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), in) && !strings.Contains(err.Error(), "both") {
			t.Errorf("error %v, want one with %q", err, tc.want)
		}
	}
	// A name given for a text file.
	txt := filepath.Join(dir, "e.tsv")
	os.WriteFile(txt, []byte("a\tb\n"), 0o644)
	o := DefaultOptions()
	o.LhsName = "src"
	_, err := Import(context.Background(), intConfig(t, dir, false), o, []string{txt})
	if err == nil || !strings.Contains(err.Error(), "no column names") {
		t.Errorf("error %v, want one saying text files have no column names", err)
	}
	// Corrupt files: truncated, and a footer length past the file's start.
	b, _ := os.ReadFile(in)
	long := append([]byte{}, b...)
	copy(long[len(long)-8:], "\x00\xff\xff\x7fPAR1")
	garbled := append([]byte{}, b...)
	n := int(binary.LittleEndian.Uint32(b[len(b)-8:]))
	for i := len(b) - 8 - n; i < len(b)-8; i++ {
		garbled[i] = 0xff
	}
	for name, tc := range map[string]struct {
		data []byte
		want string
	}{
		"garbled.parquet": {garbled, "not a readable Parquet file (its footer cannot be decoded)"},
		"cut.parquet":     {b[:len(b)-9], "not a Parquet file (no PAR1 magic"},
		"long.parquet":    {long, "not a readable Parquet file (its footer claims 2147483392 bytes"},
	} {
		bad := filepath.Join(dir, name)
		os.WriteFile(bad, tc.data, 0o644)
		_, err = Import(context.Background(), intConfig(t, dir, false), DefaultOptions(), []string{bad})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: error %v, want one naming the file and saying %q", name, err, tc.want)
		}
	}
}

func TestDetectFormat(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		data string
		want Format
	}{
		"a.parquet": {"", FormatParquet},
		"A.PARQUET": {"x", FormatParquet},
		"magic":     {"PAR1\x00", FormatParquet},
		"edges.tsv": {"PAR", FormatText},
		"empty":     {"", FormatText},
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(tc.data), 0o644)
		if got, err := DetectFormat(p); err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", name, got, err, tc.want)
		}
	}
}

// A text file and a Parquet file in one import share the dictionaries:
// each edge set reads back as written.
func TestParquetAndTextMixed(t *testing.T) {
	dir := t.TempDir()
	c := kgConfig(t, dir, 2, 2)
	tsv := filepath.Join(dir, "a.tsv")
	refA := genKG(t, tsv, 500, 3, false)
	refB := genKG(t, filepath.Join(dir, "b.tsv"), 700, 4, true)
	rows := make([]pqEdge, len(refB))
	for i, e := range refB {
		rows[i] = pqEdge{e.lhs, e.rel, e.rhs, e.weight}
	}
	pq := filepath.Join(dir, "b.parquet")
	writePQ(t, pq, rows, 256)
	o := kgOptions() // indexes 0, 1, 2, 3: the Parquet file's src, rel, dst, weight
	if _, err := Import(context.Background(), c, o, []string{tsv, pq}); err != nil {
		t.Fatal(err)
	}
	got := readAll(t, c)
	if !reflect.DeepEqual(got[0], refA) || !reflect.DeepEqual(got[1], refB) {
		t.Fatal("an edge set differs from its input")
	}
}

// Invariant 3: an import cancelled while row groups are being decoded
// stops (its decoders too) and leaves no store behind.
func TestParquetCancel(t *testing.T) {
	dir := t.TempDir()
	c := intConfig(t, dir, false)
	var rows []pqIntEdge
	for i := range 20000 {
		rows = append(rows, pqIntEdge{int64(i), int32(i % 77)})
	}
	in := filepath.Join(dir, "e.parquet")
	writePQ(t, in, rows, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	o := DefaultOptions()
	o.RhsCol = 1
	calls := 0
	o.Progress = func(Progress) {
		calls++
		cancel()
	}
	_, err := Import(ctx, c, o, []string{in})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Fatalf("error %v after %d progress calls, want context.Canceled after 1", err, calls)
	}
	for _, d := range []string{c.EntityPath, c.EdgePaths[0]} {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s exists after a cancelled import", d)
		}
	}
}
