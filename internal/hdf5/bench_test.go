package hdf5

import (
	"bytes"
	"testing"
)

// Writing and reading back, in memory, an embeddings file of 100,000
// entities at dimension 100 (40 MB of float32). Its figure is still to be
// taken on a quiet machine (docs/formats-pbg.md).
func BenchmarkWriteRead(b *testing.B) {
	const rows, dim = 100_000, 100
	emb := make([]float32, rows*dim)
	for i := range emb {
		emb[i] = float32(i)
	}
	b.SetBytes(int64(4 * len(emb)))
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		t := NewTree()
		t.Root().Dataset("embeddings", Float32, []uint64{rows, dim}, Float32s(emb))
		if _, err := t.WriteTo(&buf); err != nil {
			b.Fatal(err)
		}
		f, err := Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			b.Fatal(err)
		}
		o, err := f.Get("embeddings")
		if err != nil {
			b.Fatal(err)
		}
		if v, err := o.Float32s(); err != nil || len(v) != len(emb) {
			b.Fatal(err)
		}
	}
}
