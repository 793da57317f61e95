package edgestore

import (
	"bytes"
	"testing"
)

// Invariant 1: the header round-trips and any damage is detected.
func TestHeaderRoundTripAndDamage(t *testing.T) {
	h := Header{Weights: true, Edges: 123456789, Lhs: 3, Rhs: 7}
	b := h.Encode()
	if len(b) != HeaderSize {
		t.Fatalf("header size %d", len(b))
	}
	got, err := DecodeHeader(b)
	if err != nil || got != h {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	for i := range b {
		d := bytes.Clone(b)
		d[i] ^= 0x10
		if _, err := DecodeHeader(d); err == nil {
			t.Errorf("flipping byte %d went unnoticed", i)
		}
	}
	if _, err := DecodeHeader(b[:10]); err == nil {
		t.Error("short header accepted")
	}
}

func TestLayout(t *testing.T) {
	offs, size := layout(10, false)
	if offs[ColLhs] != 64 || offs[ColRhs] != 104 || offs[ColRel] != 144 || offs[ColOrdinal] != 184 || size != 264 {
		t.Fatalf("layout without weights: %v %d", offs, size)
	}
	offs, size = layout(10, true)
	if offs[ColWeight] != 184 || offs[ColOrdinal] != 224 || size != 304 {
		t.Fatalf("layout with weights: %v %d", offs, size)
	}
}

func FuzzDecodeHeader(f *testing.F) {
	f.Add(Header{Weights: true, Edges: 5, Lhs: 1, Rhs: 2}.Encode())
	f.Add(Header{}.Encode())
	f.Add([]byte("BPEDGES"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := DecodeHeader(b)
		if err != nil {
			return
		}
		if !bytes.Equal(h.Encode(), b[:HeaderSize]) {
			t.Fatalf("accepted header does not re-encode to the same bytes")
		}
	})
}
