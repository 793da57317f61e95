package hdf5

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

func sample() *Tree {
	t := NewTree()
	r := t.Root()
	r.SetAttr("format_version", int64(1))
	r.SetAttr("config/json", `{"dimension": 2}`)
	r.SetAttr("empty", "")
	r.SetAttr("ratio", 0.5)
	r.Dataset("embeddings", Float32, []uint64{3, 2}, Float32s([]float32{1, 2, 3, 4, 5, -6}))
	d := r.Dataset("model/relations/0/operator/rhs/diagonal", Float32, []uint64{2}, Float32s([]float32{7, 8}))
	d.SetAttr("state_dict_key", "rhs_operators.0.diagonal")
	r.Dataset("lhs", Int64, []uint64{4}, Int64s([]int64{0, -1, 1 << 50, 3}))
	r.Dataset("none", Int64, []uint64{0}, Int64s(nil))
	r.Dataset("optimizer/state_dict", Type{Opaque, 1}, []uint64{3}, Bytes([]byte("abc")))
	r.Group("model/entities")
	r.Dataset(strings.Repeat("n", 300), Uint8, []uint64{1}, Bytes([]byte{9}))
	return t
}

// Invariant 1: what Write writes, Open reads back.
func TestWriteRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if _, err := sample().WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	root, _ := f.Root()
	wantAttr(t, root, "format_version", int64(1))
	wantAttr(t, root, "config/json", `{"dimension": 2}`)
	wantAttr(t, root, "empty", "")
	wantAttr(t, root, "ratio", 0.5)
	wantFloats(t, f, "embeddings", []uint64{3, 2}, []float32{1, 2, 3, 4, 5, -6})
	wantFloats(t, f, "model/relations/0/operator/rhs/diagonal", []uint64{2}, []float32{7, 8})
	wantAttr(t, get(t, f, "model/relations/0/operator/rhs/diagonal"), "state_dict_key", "rhs_operators.0.diagonal")
	wantInts(t, f, "lhs", []int64{0, -1, 1 << 50, 3})
	wantInts(t, f, "none", []int64{})
	wantInts(t, f, strings.Repeat("n", 300), []int64{9})
	if b, err := get(t, f, "optimizer/state_dict").Read(); err != nil || string(b) != "abc" {
		t.Fatalf("opaque: %q %v", b, err)
	}
	ms, err := get(t, f, "model").Members()
	if err != nil || len(ms) != 2 || ms[0].Name != "relations" || ms[1].Name != "entities" {
		t.Fatalf("model members %v %v, want relations, entities", ms, err)
	}
	if len(buf.Bytes()) != int(buf.Len()) {
		t.Fatal("length")
	}
}

// A source that writes the wrong number of bytes is an error.
func TestWriteShortSource(t *testing.T) {
	tr := NewTree()
	tr.Root().Dataset("x", Float32, []uint64{3}, Float32s([]float32{1, 2}))
	if _, err := tr.WriteTo(io.Discard); err == nil || !strings.Contains(err.Error(), "wrote 8 bytes, want 12") {
		t.Fatalf("err = %v", err)
	}
	tr = NewTree()
	boom := errors.New("boom")
	tr.Root().Dataset("x", Float32, []uint64{1}, func(io.Writer) error { return boom })
	if _, err := tr.WriteTo(io.Discard); !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
}

// An attribute too large for one header message is an error, not a
// damaged file.
func TestWriteAttrTooLarge(t *testing.T) {
	tr := NewTree()
	tr.Root().SetAttr("big", strings.Repeat("x", MaxAttr+100))
	if _, err := tr.WriteTo(io.Discard); err == nil || !strings.Contains(err.Error(), "cannot store") {
		t.Fatalf("err = %v", err)
	}
	tr = NewTree()
	tr.Root().SetAttr("big", strings.Repeat("x", MaxAttr-100))
	var buf bytes.Buffer
	if _, err := tr.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	root, _ := f.Root()
	wantAttr(t, root, "big", strings.Repeat("x", MaxAttr-100))
}

// Invariant 4: any damaged byte of a written file is an error or a
// different value, never a panic.
func TestWriteDamaged(t *testing.T) {
	var buf bytes.Buffer
	sample().WriteTo(&buf)
	good := buf.Bytes()
	for i := 0; i < len(good); i += 3 {
		b := append([]byte(nil), good...)
		b[i] ^= 0x5a
		f, err := Open(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			continue
		}
		walkAll(f)
	}
	_ = reflect.DeepEqual
}
