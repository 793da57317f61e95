package model

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// A mapped table draws the same values as an ordinary one, counts in
// Resident until released, and is released once however often Release is
// called; afterwards it is empty, so a use of it fails on an index out of
// range rather than reaching unmapped memory.
func TestMappedTableRelease(t *testing.T) {
	base := Resident()
	ResetPeakResident()
	a := NewTable(1000, 8, 0.1, rand.New(rand.NewPCG(1, 2)))
	b := NewMappedTable(1000, 8, 0.1, rand.New(rand.NewPCG(1, 2)))
	big := MapTable(1<<20, 3) // 16 MiB: advised as huge pages
	if !slices.Equal(a.Emb, b.Emb) || !slices.Equal(a.Acc, b.Acc) || len(big.Emb) != 3<<20 {
		t.Fatal("a mapped table differs from an ordinary one")
	}
	big.Emb[len(big.Emb)-1], big.Acc[len(big.Acc)-1] = 1, 2
	want := Residency{Tables: base.Tables + 2, Bytes: base.Bytes + 4*(1000*9+(1<<20)*4)}
	if got := Resident(); got != want {
		t.Errorf("resident %+v, want %+v (ordinary tables do not count)", got, want)
	}
	big.Release()
	big.Release()
	b.Release()
	a.Release()
	if got, peak := Resident(), PeakResident(); got != base || peak != want {
		t.Errorf("after release: resident %+v (want %+v), peak %+v (want %+v)", got, base, peak, want)
	}
	if b.Rows != 0 || b.Emb != nil || a.Emb != nil {
		t.Errorf("a released table still has rows: %d, %d floats", b.Rows, len(b.Emb))
	}
	defer func() {
		if recover() == nil {
			t.Error("reading a released table did not panic")
		}
	}()
	b.Read(3, make([]float32, 8))
}
