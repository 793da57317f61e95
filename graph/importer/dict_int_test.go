package importer

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph/config"
)

// Integer ids of Parquet files go through the dictionaries' integer index
// (dict_int.go); these tests ask that the store is still the one the same
// edges give as text, byte for byte, however the integer and the name
// paths interleave.

// typedIntConfig has two entity types (n and m, 2 partitions each) and three
// relations whose names are integers, two of them between different
// types, so that integer rows reach different dictionaries.
func typedIntConfig(t testing.TB, dir string, sets int) *config.Config {
	t.Helper()
	var paths []string
	for i := range sets {
		paths = append(paths, strconv.Quote(filepath.Join(dir, fmt.Sprintf("s%d", i))))
	}
	doc := fmt.Sprintf(`entity_path = %q
edge_paths = [%s]
checkpoint_path = "c"
seed = 3
[entities.n]
num_partitions = 2
[entities.m]
num_partitions = 2
[[relations]]
name = "7"
lhs = "n"
rhs = "m"
[[relations]]
name = "-3"
lhs = "m"
rhs = "n"
[[relations]]
name = "0"
lhs = "n"
rhs = "n"
`, filepath.Join(dir, "e"), strings.Join(paths, ", "))
	c, err := config.Parse([]byte(doc), "toml")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type pqIntRel struct {
	Src int64 `parquet:"src"`
	Rel int64 `parquet:"rel"`
	Dst int32 `parquet:"dst,dict"` // a dictionary per row group
}

// intEdge returns edge i of the mixed test: ids from a pool that holds
// the int64 and int32 extremes, negative ids and 0, and a range that
// moves with i (so that the dictionaries of later row groups differ and
// new entities keep coming).
func intEdge(i int) pqIntRel {
	pool := []int64{42, -5, 0, math.MaxInt64, math.MinInt64, -1, 1, math.MaxInt32, math.MinInt32, 1000}
	rels := []int64{7, -3, 0}
	src := pool[i%len(pool)]
	if i%3 == 0 {
		src = int64(i/4) - 100
	}
	dst := int32(i/10 - 50)
	if i%7 == 0 {
		dst = int32(pool[(i/7)%len(pool)]) // the int32 extremes wrap: as written, in decimal
	}
	return pqIntRel{src, rels[i%len(rels)], dst}
}

func intEdgesText(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		e := intEdge(i)
		fmt.Fprintf(&b, "%d\t%d\t%d\n", e.Src, e.Rel, e.Dst)
	}
	return b.String()
}

// Text and Parquet files of integer ids in one import share the
// dictionaries: an entity a text file named first ("42") is the same
// entity when a Parquet row gives 42, and an entity a Parquet file added
// is found by name in a later text file. Negative, huge and int32 ids,
// dictionary pages that change between row groups, three relations over
// two entity types: the store equals that of the same edges as text files.
func TestParquetIntegerIDsWithText(t *testing.T) {
	var snaps []map[string][]byte
	for _, mixed := range []bool{false, true} {
		dir := t.TempDir()
		c := typedIntConfig(t, dir, 3)
		a, b, pq := filepath.Join(dir, "a.tsv"), filepath.Join(dir, "b.tsv"), filepath.Join(dir, "mid.tsv")
		os.WriteFile(a, []byte(intEdgesText(0, 300)), 0o644)
		os.WriteFile(b, []byte(intEdgesText(1300, 1600)), 0o644)
		if mixed {
			var rows []pqIntRel
			for i := 300; i < 1300; i++ {
				rows = append(rows, intEdge(i))
			}
			pq = filepath.Join(dir, "mid.parquet")
			writePQ(t, pq, rows, 97)
		} else {
			os.WriteFile(pq, []byte(intEdgesText(300, 1300)), 0o644)
		}
		o := DefaultOptions()
		o.RelCol, o.RhsCol = 1, 2
		rep, err := Import(context.Background(), c, o, []string{a, pq, b})
		if err != nil {
			t.Fatalf("mixed %v: %v", mixed, err)
		}
		if rep.EdgeSets[1].Edges != 1000 || rep.EdgeSets[1].Parquet != mixed {
			t.Fatalf("mixed %v: edge set 1: %+v", mixed, rep.EdgeSets[1])
		}
		snaps = append(snaps, snapshot(t, c, ""))
	}
	sameStores(t, snaps[0], snaps[1])
}

type pqOptInt struct {
	Src *int64 `parquet:"src,optional"`
	Rel int32  `parquet:"rel,dict"`
	Dst *int64 `parquet:"dst,optional,dict"`
}

// Nulls in integer columns and integer relations missing from the config
// are bad rows at the same ordinals as the text file's empty fields and
// unknown relations; the rows around them are stored as from text. With no
// budget, the first one is the error, naming the relation as written.
func TestParquetIntegerNullsAndRelations(t *testing.T) {
	i64 := func(x int64) *int64 { return &x }
	var rows []pqOptInt
	var text strings.Builder
	for i := range 600 {
		r := pqOptInt{i64(int64(i%37) - 18), []int32{7, -3, 0}[i%3], i64(int64(i % 53))}
		switch {
		case i%41 == 5:
			r.Src = nil
		case i%43 == 6:
			r.Dst = nil
		case i%47 == 7:
			r.Rel = 5
		}
		rows = append(rows, r)
		field := func(p *int64) string {
			if p == nil {
				return ""
			}
			return strconv.FormatInt(*p, 10)
		}
		fmt.Fprintf(&text, "%s\t%d\t%s\n", field(r.Src), r.Rel, field(r.Dst))
	}
	var snaps []map[string][]byte
	for _, format := range []string{"tsv", "parquet"} {
		dir := t.TempDir()
		c := typedIntConfig(t, dir, 1)
		in := filepath.Join(dir, "in."+format)
		if format == "tsv" {
			os.WriteFile(in, []byte(text.String()), 0o644)
		} else {
			writePQ(t, in, rows, 128)
		}
		o := DefaultOptions()
		o.RelCol, o.RhsCol = 1, 2
		o.MaxErrors = 1000
		rep, err := Import(context.Background(), c, o, []string{in})
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if rep.Skipped != 42 {
			t.Errorf("%s: %d rows skipped, want 42", format, rep.Skipped)
		}
		snaps = append(snaps, snapshot(t, c, ""))
		if format == "parquet" {
			o.MaxErrors = 0
			_, err := Import(context.Background(), c, o, []string{in})
			want := `row group 0, row 5, column "src": null value: the lhs entity is null`
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v, want %q", err, want)
			}
			rows[5].Src, rows[6].Dst = i64(1), i64(1)
			writePQ(t, in, rows[:30], 128)
			_, err = Import(context.Background(), c, o, []string{in})
			want = `row group 0, row 7, column "rel": unknown relation: relation "5" is not in the config's relations`
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("error %v, want %q", err, want)
			}
		}
	}
	sameStores(t, snaps[0], snaps[1])
}

type pqUnsigned struct {
	Src uint32 `parquet:"src"`
	Dst uint64 `parquet:"dst,dict"`
}

// Unsigned columns: UINT32 ids take the integer index (as their int64
// values), UINT64 ids the name path, 2^64-1 included; the store equals the
// text import's.
func TestParquetUnsignedIDs(t *testing.T) {
	var rows []pqUnsigned
	var text strings.Builder
	for i := range 500 {
		r := pqUnsigned{uint32(i%29) * 150_000_000, uint64(i%31) * 600_000_000_000_000_000}
		if i%9 == 0 {
			r.Dst = math.MaxUint64
		}
		rows = append(rows, r)
		fmt.Fprintf(&text, "%d\t%d\n", r.Src, r.Dst)
	}
	var snaps []map[string][]byte
	for _, format := range []string{"tsv", "parquet"} {
		dir := t.TempDir()
		c := intConfig(t, dir, false)
		in := filepath.Join(dir, "in."+format)
		if format == "tsv" {
			os.WriteFile(in, []byte(text.String()), 0o644)
		} else {
			writePQ(t, in, rows, 100)
		}
		o := DefaultOptions()
		o.RhsCol = 1
		if _, err := Import(context.Background(), c, o, []string{in}); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		snaps = append(snaps, snapshot(t, c, ""))
	}
	sameStores(t, snaps[0], snaps[1])
}

// The integer index on its own: it grows past its first size, holds
// negative and extreme keys, and a key inserted twice keeps its first id.
func TestDictIntIndex(t *testing.T) {
	d := newDict("n")
	d.iseed = 12345
	keys := []int64{math.MinInt64, math.MaxInt64, 0, -1}
	for i := range 5000 {
		keys = append(keys, int64(i)*7919-20000)
	}
	for id, k := range keys {
		d.insertInt(k, intHash(d.iseed, k), uint32(id))
	}
	d.insertInt(keys[3], intHash(d.iseed, keys[3]), 99999)
	if len(d.ints) < 2*len(keys) {
		t.Fatalf("%d slots for %d keys", len(d.ints), len(keys))
	}
	for id, k := range keys {
		got, ok := d.lookupInt(k, intHash(d.iseed, k))
		if !ok || got != uint32(id) {
			t.Fatalf("key %d: %d, %v; want %d", k, got, ok, id)
		}
	}
	if _, ok := d.lookupInt(3, intHash(d.iseed, 3)); ok {
		t.Fatal("key 3 found, never inserted")
	}
}

type pqInt64Edge struct {
	Src int64 `parquet:"src"`
	Rel int64 `parquet:"rel"`
	Dst int64 `parquet:"dst"`
}

type pqStrIntEdge struct {
	Src string `parquet:"src,dict"`
	Rel int64  `parquet:"rel"`
	Dst int64  `parquet:"dst"`
}

// While every entity came by integer id, a new integer id goes into the
// integer index but not the name table (dict_int.go); the first lookup by
// name places the rest. These imports start with integer files, so that
// the name table is left behind, then look names up: a file whose lhs is a
// string ("5" is the entity integer 5 names, "x3" and "007" are not) and
// whose rhs is an integer, on rows where both sides are new; a text file;
// another integer file, now taking the name path; a file of strings on
// both sides, dictionary-encoded, whose decoders look values up in a name
// table still behind. Self-loops and rows whose two sides are new and
// equal included; one entity type, and two (rows reaching different
// dictionaries). Each store must equal that of the same edges as text
// files.
func TestParquetIntegerIDsFirst(t *testing.T) {
	id := func(i int) int64 { return int64((i*37)%500) - 250 }
	intRows := func(from, to int) (rows []pqInt64Edge, text string) {
		var b strings.Builder
		for i := from; i < to; i++ {
			e := pqInt64Edge{id(i), []int64{7, -3, 0}[i%3], id(i*3 + 1)}
			if i%11 == 0 {
				e.Dst = e.Src
			}
			rows = append(rows, e)
			fmt.Fprintf(&b, "%d\t%d\t%d\n", e.Src, e.Rel, e.Dst)
		}
		return rows, b.String()
	}
	strRows := func(from, to int) (rows []pqStrIntEdge, text string) {
		var b strings.Builder
		for i := from; i < to; i++ {
			dst := int64(1000 + i)
			src := []string{"x" + strconv.Itoa(i), strconv.Itoa(1000 + i), "007", strconv.Itoa(int(id(i))), "5", "-0"}[i%6]
			rows = append(rows, pqStrIntEdge{src, 7, dst})
			fmt.Fprintf(&b, "%s\t7\t%d\n", src, dst)
		}
		return rows, b.String()
	}
	dictRows := func(from, to int) (rows []pqDictStrEdge, text string) {
		var b strings.Builder
		for i := from; i < to; i++ {
			e := pqDictStrEdge{strconv.Itoa(int(id(i))), []int64{7, -3, 0}[i%3], "y" + strconv.Itoa(i%50)}
			if i%4 == 0 {
				e.Dst = strconv.Itoa(int(id(i + 7)))
			}
			rows = append(rows, e)
			fmt.Fprintf(&b, "%s\t%d\t%s\n", e.Src, e.Rel, e.Dst)
		}
		return rows, b.String()
	}
	orders := [][]string{{"int", "str", "text", "int"}, {"int", "text", "int", "str"}, {"int", "int", "str"},
		{"int", "dict", "int"}, {"int", "int", "dict", "text"}}
	for _, typed := range []bool{false, true} {
		for _, order := range orders {
			testIntegerIDsFirst(t, typed, order, intRows, strRows, dictRows)
		}
	}
}

type pqDictStrEdge struct {
	Src string `parquet:"src,dict"`
	Rel int64  `parquet:"rel"`
	Dst string `parquet:"dst,dict"`
}

// oneTypeConfig is c with one entity type: every relation between n and
// n, so that both sides of every row share a dictionary.
func oneTypeConfig(t testing.TB, c *config.Config) *config.Config {
	t.Helper()
	one := *c
	one.Relations = slices.Clone(c.Relations)
	for i := range one.Relations {
		one.Relations[i].Lhs, one.Relations[i].Rhs = "n", "n"
	}
	one.Entities = map[string]config.Entity{"n": c.Entities["n"]}
	if err := one.Validate(); err != nil {
		t.Fatal(err)
	}
	return &one
}

// testIntegerIDsFirst imports files of the given kinds as Parquet and as
// text, with one entity type or with typedIntConfig's two, and compares
// the stores.
func testIntegerIDsFirst(t *testing.T, typed bool, order []string,
	intRows func(from, to int) ([]pqInt64Edge, string),
	strRows func(from, to int) ([]pqStrIntEdge, string),
	dictRows func(from, to int) ([]pqDictStrEdge, string)) {
	t.Helper()
	var snaps []map[string][]byte
	for _, mixed := range []bool{false, true} {
		dir := t.TempDir()
		c := typedIntConfig(t, dir, len(order))
		if !typed {
			c = oneTypeConfig(t, c)
		}
		var files []string
		for k, kind := range order {
			from, to := k*400, k*400+400
			name := filepath.Join(dir, fmt.Sprintf("f%d", k))
			pq := mixed && kind != "text"
			var text string
			switch kind {
			case "int", "text":
				var rows []pqInt64Edge
				rows, text = intRows(from, to)
				if pq {
					writePQ(t, name+".parquet", rows, 128)
				}
			case "str":
				var rows []pqStrIntEdge
				rows, text = strRows(from, to)
				if pq {
					writePQ(t, name+".parquet", rows, 128)
				}
			case "dict":
				var rows []pqDictStrEdge
				rows, text = dictRows(from, to)
				if pq {
					writePQ(t, name+".parquet", rows, 128)
				}
			}
			if kind == "text" {
				text += "x1\t0\t12\n007\t-3\t7\n"
			}
			if pq {
				name += ".parquet"
			} else {
				name += ".tsv"
				if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			files = append(files, name)
		}
		o := DefaultOptions()
		o.RelCol, o.RhsCol = 1, 2
		if _, err := Import(context.Background(), c, o, files); err != nil {
			t.Fatalf("%v, typed %v, parquet %v: %v", order, typed, mixed, err)
		}
		snaps = append(snaps, snapshot(t, c, ""))
	}
	sameStores(t, snaps[0], snaps[1])
}
