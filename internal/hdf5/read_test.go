package hdf5

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// open opens a testdata file written by h5py (testdata/gen.py).
func open(t *testing.T, name string) *File {
	t.Helper()
	f, err := OpenFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func get(t *testing.T, f *File, path string) *Object {
	t.Helper()
	o, err := f.Get(path)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func wantFloats(t *testing.T, f *File, path string, shape []uint64, want []float32) {
	t.Helper()
	o := get(t, f, path)
	s, typ, err := o.Shape()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, shape) || typ != Float32 {
		t.Fatalf("%s: shape %v %s, want %v float32", path, s, typ, shape)
	}
	v, err := o.Float32s()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("%s = %v, want %v", path, v, want)
	}
}

func wantInts(t *testing.T, f *File, path string, want []int64) {
	t.Helper()
	v, err := get(t, f, path).Int64s()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("%s = %v, want %v", path, v, want)
	}
}

func wantAttr(t *testing.T, o *Object, name string, want any) {
	t.Helper()
	v, err := o.Attr(name)
	if err != nil {
		t.Fatal(err)
	}
	if v != want {
		t.Fatalf("%s attribute %s = %v (%T), want %v (%T)", o.Name, name, v, v, want, want)
	}
}

// Invariant 2: h5py's default layout (superblock 0, symbol tables).
func TestReadH5pyDefault(t *testing.T) {
	f := open(t, "default.h5")
	root, err := f.Root()
	if err != nil {
		t.Fatal(err)
	}
	wantAttr(t, root, "format_version", int64(1))
	wantAttr(t, root, "fixed", "fixed string")
	wantAttr(t, root, "ratio", 0.25)
	wantAttr(t, root, "small", int64(-7))
	wantAttr(t, root, "config/json", `{"dimension": 4}`)
	if _, err := root.Attr("nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing attribute: %v, want ErrNotFound", err)
	}
	want := make([]float32, 12)
	for i := range want {
		want[i] = float32(i) / 4
	}
	wantFloats(t, f, "embeddings", []uint64{3, 4}, want)
	wantFloats(t, f, "empty", []uint64{0, 4}, []float32{})
	wantInts(t, f, "lhs", []int64{5, -1, 1 << 40})
	wantInts(t, f, "u8", []int64{0, 255, 7})
	wantInts(t, f, "i32", []int64{-2, 3})
	o := get(t, f, "optimizer/state_dict")
	_, typ, _ := o.Shape()
	b, err := o.Read()
	if err != nil || typ != (Type{Opaque, 1}) || string(b) != "opaque bytes" {
		t.Fatalf("optimizer/state_dict: %s %q %v", typ, b, err)
	}
	s, typ, err := get(t, f, "scalar").Shape()
	if err != nil || len(s) != 0 || typ != Float64 {
		t.Fatalf("scalar: %v %s %v", s, typ, err)
	}
	ms, err := root.Members()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	if !reflect.DeepEqual(names, []string{"embeddings", "empty", "i32", "lhs", "optimizer", "scalar", "u8"}) {
		t.Fatalf("members %v", names)
	}
	if _, err := f.Get("optimizer/nothing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing path: %v", err)
	}
}

// Invariant 2: a creation-order group (PBG's model file), nested groups.
func TestReadH5pyTrackOrder(t *testing.T) {
	f := open(t, "tracked.h5")
	m := get(t, f, "model")
	ms, err := m.Members()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[0].Name != "relations" || ms[1].Name != "entities" {
		t.Fatalf("model members %v, want relations then entities (creation order)", ms)
	}
	wantFloats(t, f, "model/relations/1/operator/rhs/translation", []uint64{4}, []float32{1, 1, 1, 1})
	lin := make([]float32, 16)
	for i := range lin {
		lin[i] = 2
	}
	wantFloats(t, f, "model/relations/0/operator/rhs/linear_transformation", []uint64{4, 4}, lin)
	o := get(t, f, "model/entities/user/global_embedding")
	wantAttr(t, o, "state_dict_key", "entities.user.global_embedding")
}

// Invariant 2: chunked datasets as PBG's edge appender writes them.
func TestReadH5pyChunked(t *testing.T) {
	f := open(t, "chunked.h5")
	wantInts(t, f, "rel", []int64{0, 3, 6, 9, 12, 15, 18, 21, 24, 27})
	want := make([]float32, 15)
	for i := range want {
		want[i] = float32(i)
	}
	wantFloats(t, f, "m", []uint64{5, 3}, want)
	if _, err := get(t, f, "z").Read(); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("gzip dataset: %v, want ErrUnsupported", err)
	}
}

// Invariant 2: libver="latest" (superblock 3, version 2 headers).
func TestReadH5pyLatest(t *testing.T) {
	f := open(t, "latest.h5")
	wantFloats(t, f, "embeddings", []uint64{2, 3}, []float32{0, 1, 2, 3, 4, 5})
	wantInts(t, f, "g/rhs", []int64{1, 2, 3})
	root, _ := f.Root()
	wantAttr(t, root, "format_version", int64(1))
}

// Invariant 2: B-trees of several symbol nodes, continued headers.
func TestReadH5pyMany(t *testing.T) {
	f := open(t, "many.h5")
	root, err := f.Root()
	if err != nil {
		t.Fatal(err)
	}
	ms, err := root.Members()
	if err != nil || len(ms) != 40 {
		t.Fatalf("%d members, %v", len(ms), err)
	}
	wantInts(t, f, "d37", []int64{37})
	as, err := root.Attrs()
	if err != nil || len(as) != 30 {
		t.Fatalf("%d attributes, %v", len(as), err)
	}
	wantAttr(t, root, "a29", int64(29))
}

// Invariant 2: dense storage (fractal heap and version 2 B-tree) for a
// group's 1500 links, a creation-order group's 20 attributes and an
// attribute past 64 KiB.
func TestReadH5pyDense(t *testing.T) {
	f := open(t, "dense.h5")
	ms, err := get(t, f, "model/relations").Members()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range ms {
		seen[m.Name] = true
	}
	if len(ms) != 1500 || !seen["0"] || !seen["1499"] || !seen["777"] {
		t.Fatalf("%d links", len(ms))
	}
	wantInts(t, f, "model/relations/1234/x", []int64{7})
	as, err := get(t, f, "attrs").Attrs()
	if err != nil || len(as) != 20 {
		t.Fatalf("%d attributes, %v", len(as), err)
	}
	wantAttr(t, get(t, f, "attrs"), "a13", int64(13))
	root, _ := f.Root()
	wantAttr(t, root, "big", strings.Repeat("x", 70000))
}

// Invariant 4: every truncation of a real file is an error, not a panic.
func TestReadTruncated(t *testing.T) {
	for _, name := range []string{"default.h5", "latest.h5", "dense.h5"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < len(data); n += 97 {
			f, err := Open(bytes.NewReader(data[:n]), int64(n))
			if err != nil {
				continue
			}
			walkAll(f)
		}
	}
}

// walkAll reads everything in f, ignoring errors (for damaged files).
func walkAll(f *File) {
	root, err := f.Root()
	if err != nil {
		return
	}
	seen := map[uint64]bool{} // hard links may form cycles
	var walk func(o *Object, depth int)
	walk = func(o *Object, depth int) {
		if depth > 8 || seen[o.addr] {
			return
		}
		seen[o.addr] = true
		if as, err := o.Attrs(); err == nil {
			for _, a := range as {
				a.Value()
			}
		}
		if !o.IsGroup() {
			o.Shape()
			o.Read()
			return
		}
		ms, _ := o.Members()
		for _, m := range ms {
			if c, err := o.Child(m); err == nil {
				walk(c, depth+1)
			}
		}
	}
	walk(root, 0)
}
