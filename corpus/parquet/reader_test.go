package parquet

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/corpus"
	pq "github.com/parquet-go/parquet-go"
)

// writeFile writes rows with the given schema, maxRows rows per row group
// (0: one row group), and returns the path.
func writeFile(t testing.TB, g pq.Group, rows []map[string]any, maxRows int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.parquet")
	if err := os.WriteFile(p, encode(t, g, rows, maxRows), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// encode is the Parquet file of rows with schema g, maxRows rows per row
// group (when > 0), as the library writes it.
func encode(t testing.TB, g pq.Group, rows []map[string]any, maxRows int) []byte {
	t.Helper()
	var b bytes.Buffer
	opts := []pq.WriterOption{pq.NewSchema("t", g)}
	if maxRows > 0 {
		opts = append(opts, pq.MaxRowsPerRowGroup(int64(maxRows)))
	}
	w := pq.NewGenericWriter[map[string]any](&b, opts...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func list(of pq.Node) pq.Node { return pq.List(of) }

var (
	f64 = pq.Leaf(pq.DoubleType)
	f32 = pq.Leaf(pq.FloatType)
	i32 = pq.Leaf(pq.Int32Type)
	i64 = pq.Leaf(pq.Int64Type)
)

func openT(t *testing.T, p string, cfg Config) *Reader {
	t.Helper()
	r, err := Open(p, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func chunk(t *testing.T, r *Reader, c int) *corpus.Chunk {
	t.Helper()
	ch, err := r.LoadChunk(c)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// TestSampleCounts: a sequence's sample count is the largest stream's, or
// the defines-mb-size stream's; labels are the label stream's (invariant 2).
func TestSampleCounts(t *testing.T) {
	g := pq.Group{"a": list(f64), "b": list(i32)}
	rows := []map[string]any{
		{"a": []any{1.0, 2, 3, 4, 5, 6}, "b": []any{int32(4)}},
		{"a": []any{1.0, 2}, "b": []any{int32(0), int32(1), int32(2)}},
	}
	p := writeFile(t, g, rows, 0)
	streams := []corpus.Stream{{Name: "a", Dim: 2}, {Name: "b", Dim: 5, Sparse: true}}
	for _, c := range []struct {
		mb, label string
		samples   []uint32
		labels    []uint32
	}{
		{"", "", []uint32{3, 3}, nil},
		{"b", "", []uint32{1, 3}, nil},
		{"a", "b", []uint32{3, 1}, []uint32{1, 3}},
	} {
		r := openT(t, p, Config{Streams: streams, DefinesMBSize: c.mb, Label: c.label})
		l := r.Layout()
		if !reflect.DeepEqual(l.Samples, c.samples) || !reflect.DeepEqual(l.Labels, c.labels) {
			t.Errorf("mb %q label %q: samples %v labels %v, want %v %v", c.mb, c.label, l.Samples, l.Labels, c.samples, c.labels)
		}
	}
}

// TestShapes: dense as a flat list and as a list of lists, sparse one-hot
// and as lists with a values column, ids from the id column (invariant 1).
func TestShapes(t *testing.T) {
	g := pq.Group{
		"id":         pq.String(),
		"flat":       list(f32),
		"nested":     pq.Optional(list(pq.Optional(list(pq.Optional(f64))))),
		"hot":        list(i64),
		"bag":        list(list(i32)),
		"bag_values": list(list(f64)),
	}
	rows := []map[string]any{
		{"id": "a7", "flat": []any{float32(1), float32(2)}, "nested": []any{[]any{0.5, 1.5}, []any{2.5, 3.5}},
			"hot": []any{int64(3), int64(0)}, "bag": []any{[]any{int32(1), int32(2)}, []any{}}, "bag_values": []any{[]any{0.25, 4.0}, []any{}}},
	}
	p := writeFile(t, g, rows, 0)
	streams := []corpus.Stream{{Name: "flat", Dim: 1}, {Name: "nested", Dim: 2}, {Name: "hot", Dim: 4, Sparse: true}, {Name: "bag", Dim: 3, Sparse: true}}
	r := openT(t, p, Config{Streams: streams})
	ch := chunk(t, r, 0)
	if ch.IDs[0] != "a7" {
		t.Errorf("id %q, want a7", ch.IDs[0])
	}
	if got := r.Layout().Samples[0]; got != 2 {
		t.Errorf("samples %d, want 2", got)
	}
	s := ch.Streams
	check := func(name string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", name, got, want)
		}
	}
	check("flat", s[0].Dense, []float32{1, 2})
	check("nested", s[1].Dense, []float32{0.5, 1.5, 2.5, 3.5})
	check("hot indices", s[2].Indices, []int32{3, 0})
	check("hot values", s[2].Values[:2], []float32{1, 1})
	check("bag rows", s[3].RowStart, []int32{0, 2, 2})
	check("bag indices", s[3].Indices, []int32{1, 2})
	check("bag values", s[3].Values, []float32{0.25, 4})
	check("bag seq", s[3].SeqStart, []int32{0, 2})
}

// TestErrors: bad contents name file, row group, row and column
// (invariant 3).
func TestErrors(t *testing.T) {
	dense := []corpus.Stream{{Name: "x", Dim: 2}}
	sparse := []corpus.Stream{{Name: "x", Dim: 3, Sparse: true}}
	flat := map[string]any{"x": []any{1.0, 2.0}}
	hot := map[string]any{"x": []any{int32(1)}}
	const at = `row group 1, row 3, column "x"`
	cases := []struct {
		name      string
		g         pq.Group
		good, bad map[string]any
		streams   []corpus.Stream
		want      error
		where     string
	}{
		{"null element", pq.Group{"x": list(pq.Optional(f64))}, flat, map[string]any{"x": []any{1.0, nil}}, dense, ErrNull, at},
		{"null list", pq.Group{"x": pq.Optional(list(f64))}, flat, map[string]any{"x": nil}, dense, ErrNull, at},
		{"empty list", pq.Group{"x": list(f64)}, flat, map[string]any{"x": []any{}}, dense, ErrEmptyStream, at},
		{"dense length", pq.Group{"x": list(f64)}, flat, map[string]any{"x": []any{1.0, 2, 3}}, dense, ErrDenseLength, at},
		{"nested dense length", pq.Group{"x": list(list(f64))}, map[string]any{"x": []any{[]any{1.0, 2.0}}}, map[string]any{"x": []any{[]any{1.0}}}, dense, ErrDenseLength, at},
		{"index range", pq.Group{"x": list(i64)}, map[string]any{"x": []any{int64(1)}}, map[string]any{"x": []any{int64(3)}}, sparse, ErrIndexRange, at},
		{"negative index", pq.Group{"x": list(i32)}, hot, map[string]any{"x": []any{int32(-1)}}, sparse, ErrIndexRange, at},
		{"values shape", pq.Group{"x": list(i32), "x_values": list(f64)}, map[string]any{"x": []any{int32(1)}, "x_values": []any{2.0}},
			map[string]any{"x": []any{int32(1)}, "x_values": []any{1.0, 2.0}}, sparse, ErrShape, `row group 1, row 3, column "x_values"`},
		{"missing column", pq.Group{"y": list(f64)}, map[string]any{"y": []any{1.0}}, map[string]any{"y": []any{1.0}}, dense, ErrMissingColumn, `column "x"`},
		{"float indices", pq.Group{"x": list(f64)}, flat, flat, sparse, ErrColumnType, `column "x": holds double`},
		{"string values", pq.Group{"x": list(pq.String())}, map[string]any{"x": []any{"a"}}, map[string]any{"x": []any{"a"}}, dense, ErrColumnType, `column "x": holds strings`},
		{"struct", pq.Group{"x": pq.Group{"a": f64, "b": f64}}, map[string]any{"x": map[string]any{"a": 1.0, "b": 2.0}}, map[string]any{"x": map[string]any{"a": 1.0, "b": 2.0}}, dense, ErrColumnType, `column "x": a group of 2 fields`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rows := []map[string]any{c.good, c.good, c.good, c.bad, c.good}
			p := writeFile(t, c.g, rows, 2)
			_, err := Open(p, Config{Streams: c.streams})
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, p) || !strings.Contains(msg, c.where) {
				t.Errorf("message %q does not name %s and %s", msg, p, c.where)
			}
			if rest := msg[len(p):]; strings.Contains(rest, "{") || strings.Contains(rest, "parquet:") {
				t.Errorf("message %q shows Go syntax or library text", msg)
			}
		})
	}
}

// TestChunksSpanRowGroups: chunks are cut by sequences or bytes whatever
// the row groups, and load the rows they index (invariant 4).
func TestChunksSpanRowGroups(t *testing.T) {
	var rows []map[string]any
	for i := range 50 {
		n := 1 + i%4
		hot := make([]any, n)
		for j := range hot {
			hot[j] = int32((i + j) % 10)
		}
		rows = append(rows, map[string]any{"id": int64(1000 + i), "x": hot})
	}
	p := writeFile(t, pq.Group{"id": i64, "x": list(i32)}, rows, 7)
	streams := []corpus.Stream{{Name: "x", Dim: 10, Sparse: true}}
	for _, cfg := range []Config{{Streams: streams, ChunkSequences: 4}, {Streams: streams, ChunkBytes: 50}} {
		r := openT(t, p, cfg)
		if r.RowGroups() != 8 {
			t.Fatalf("%d row groups, want 8", r.RowGroups())
		}
		l := r.Layout()
		if cfg.ChunkSequences == 4 && l.NumChunks() != 13 {
			t.Errorf("%d chunks of 4 sequences, want 13", l.NumChunks())
		}
		for c := range l.NumChunks() {
			a, b := l.Chunk(c)
			if cfg.ChunkBytes > 0 && b-a > 1 {
				var size int64
				for i := a; i < b; i++ {
					size += int64(l.Samples[i]) * 12
				}
				if size > 50 {
					t.Errorf("chunk %d: %d bytes, more than 50", c, size)
				}
			}
			ch := chunk(t, r, c)
			for i := a; i < b; i++ {
				row := rows[i]["x"].([]any)
				d := ch.Streams[0]
				got := d.Indices[d.SeqStart[i-a]:d.SeqStart[i-a+1]]
				for j, v := range row {
					if got[j] != v.(int32) {
						t.Fatalf("chunk %d sequence %d: %v, want %v", c, i, got, row)
					}
				}
				if ch.IDs[i-a] != strconv.Itoa(1000+i) {
					t.Fatalf("id %q, want %d", ch.IDs[i-a], 1000+i)
				}
			}
		}
	}
}

// TestFirstBadRowGroupReported: with bad rows in several row groups, which
// are indexed in parallel, the error is always the first one's.
func TestFirstBadRowGroupReported(t *testing.T) {
	var rows []map[string]any
	for i := range 40 {
		x := []any{int32(i % 3)}
		if i == 13 || i == 27 || i == 38 {
			x = []any{int32(7)}
		}
		rows = append(rows, map[string]any{"x": x})
	}
	p := writeFile(t, pq.Group{"x": list(i32)}, rows, 5)
	for range 20 {
		_, err := Open(p, Config{Streams: []corpus.Stream{{Name: "x", Dim: 3, Sparse: true}}})
		if !errors.Is(err, ErrIndexRange) || !strings.Contains(err.Error(), "row group 2, row 13,") {
			t.Fatalf("error %v, want row group 2, row 13", err)
		}
	}
}

// TestLegacyAndScalarColumns: a legacy two-level list (a repeated leaf) and
// a scalar column (one sample per row) read as streams.
func TestLegacyAndScalarColumns(t *testing.T) {
	g := pq.Group{"legacy": pq.Repeated(f64), "scalar": f32, "hot": pq.Optional(i64)}
	rows := []map[string]any{
		{"legacy": []any{1.0, 2.0, 3.0, 4.0}, "scalar": float32(0.5), "hot": int64(2)},
		{"legacy": []any{5.0, 6.0}, "scalar": float32(1.5), "hot": int64(1)},
	}
	p := writeFile(t, g, rows, 1)
	streams := []corpus.Stream{{Name: "legacy", Dim: 2}, {Name: "scalar", Dim: 1}, {Name: "hot", Dim: 3, Sparse: true}}
	r := openT(t, p, Config{Streams: streams})
	if got := r.Layout().Samples; !reflect.DeepEqual(got, []uint32{2, 1}) {
		t.Errorf("samples %v, want [2 1]", got)
	}
	ch := chunk(t, r, 0)
	if !reflect.DeepEqual(ch.Streams[0].Dense, []float32{1, 2, 3, 4, 5, 6}) || !reflect.DeepEqual(ch.Streams[1].Dense, []float32{0.5, 1.5}) ||
		!reflect.DeepEqual(ch.Streams[2].Indices, []int32{2, 1}) || !reflect.DeepEqual(ch.Streams[2].SeqStart, []int32{0, 1, 2}) {
		t.Errorf("streams %+v", ch.Streams)
	}
}
