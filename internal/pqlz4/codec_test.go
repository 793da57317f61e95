package pqlz4

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// block returns n bytes, the first random bytes of them random (the rest
// zeros), and their LZ4 block.
func block(t *testing.T, n, random int) ([]byte, []byte) {
	t.Helper()
	src := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range random {
		src[i] = byte(r.Uint32())
	}
	enc, err := Codec{}.Encode(nil, src)
	if err != nil {
		t.Fatal(err)
	}
	return src, enc
}

// TestDecodeInPlace: output that fits dst's capacity is written in dst's
// memory, even when dst is shorter than three times the block (the case
// the library's decoder moved elsewhere); without a dst the output grows
// to its size, a highly compressed block included (invariant 1).
func TestDecodeInPlace(t *testing.T) {
	src, enc := block(t, 64<<10, 64<<10)
	if 3*len(enc) <= len(src) {
		t.Fatalf("the block compresses %d to %d: want less than threefold", len(src), len(enc))
	}
	dst := make([]byte, len(src))
	got, err := Codec{}.Decode(dst, enc)
	if err != nil || !bytes.Equal(got, src) || &got[0] != &dst[0] {
		t.Fatalf("decode into an exact buffer: err %v, equal %v, in place %v", err, bytes.Equal(got, src), &got[0] == &dst[0])
	}
	for _, empty := range [][]byte{nil, make([]byte, 0, 10)} {
		got, err := Codec{}.Decode(empty, enc)
		if err != nil || !bytes.Equal(got, src) {
			t.Fatalf("decode into %d bytes of capacity: err %v, %d bytes", cap(empty), err, len(got))
		}
	}
	src, enc = block(t, 1<<20, 100) // mostly zeros: compresses far more than fourfold
	got, err = Codec{}.Decode(nil, enc)
	if err != nil || !bytes.Equal(got, src) {
		t.Fatalf("highly compressed block: err %v, %d bytes", err, len(got))
	}
}

// TestDecodeDamaged: a declared size too small for the output, and bytes
// that are not a block, fail with ErrDamaged (invariant 2).
func TestDecodeDamaged(t *testing.T) {
	src, enc := block(t, 4096, 4096)
	if _, err := (Codec{}).Decode(make([]byte, len(src)-1), enc); !errors.Is(err, ErrDamaged) {
		t.Fatalf("declared size one byte short: %v, want ErrDamaged", err)
	}
	bad := append([]byte(nil), enc[:len(enc)/2]...)
	bad = append(bad, 0xff, 0xff, 0xff)
	for _, dst := range [][]byte{nil, make([]byte, len(src))} {
		if _, err := (Codec{}).Decode(dst, bad); !errors.Is(err, ErrDamaged) {
			t.Fatalf("damaged block into %d bytes: %v, want ErrDamaged", len(dst), err)
		}
	}
	if got, err := (Codec{}).Decode(make([]byte, 8), nil); err != nil || len(got) != 0 {
		t.Fatalf("empty block: %d bytes, %v", len(got), err)
	}
}

// TestInstalled: the library reads LZ4_RAW with this codec (invariant 3)
// and writes with its own encoder (invariant 4).
func TestInstalled(t *testing.T) {
	if _, ok := pq.LookupCompressionCodec(format.Lz4Raw).(Codec); !ok {
		t.Fatalf("the library's LZ4_RAW codec is %T", pq.LookupCompressionCodec(format.Lz4Raw))
	}
	src, _ := block(t, 5000, 5000)
	a, _ := Codec{}.Encode(nil, src)
	b, _ := pq.Lz4Raw.Encode(nil, src)
	if !bytes.Equal(a, b) {
		t.Error("Encode differs from the library's encoder")
	}
}
