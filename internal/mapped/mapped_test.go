package mapped

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSpillRoundTrip: tables written chunk by chunk through a spill and laid
// out by WriteTables read back, through a mapping, as they were written,
// each at a page boundary.
func TestSpillRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	s, err := NewSpill(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	var want [3][]uint32
	for range 50 {
		var chunk [3][]uint32
		size := rng.IntN(500) + 1
		for k := range chunk {
			for range size {
				chunk[k] = append(chunk[k], rng.Uint32())
			}
			want[k] = append(want[k], chunk[k]...)
		}
		s.Write(chunk[0], chunk[1], chunk[2])
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	n := len(want[0])
	if err := s.WriteTables(&buf, n); err != nil {
		t.Fatal(err)
	}
	s.Remove()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("Remove left %d files", len(ents))
	}
	path := filepath.Join(dir, "tables")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, keep := range []int64{0, 1 << 30} { // paged, and mapped whole
		m, err := Open(path, keep)
		if err != nil {
			t.Fatal(err)
		}
		step := 4*n + Pad(4*n)
		if len(m.Bytes()) != 3*step {
			t.Fatalf("%d bytes, want 3 tables of %d", len(m.Bytes()), step)
		}
		for k := range want {
			if got := U32s(m.Bytes()[k*step:], n); !slices.Equal(got, want[k]) {
				t.Fatalf("keep %d: table %d differs", keep, k)
			}
		}
		m.Close()
	}
}

// TestTablesReleaseAll: paged tables read whole are resident; ReleaseAll
// lets them all go, and they read the same afterwards.
func TestTablesReleaseAll(t *testing.T) {
	const n = 1 << 18
	data := make([]byte, 4*n)
	for i := range data {
		data[i] = byte(i * 7)
	}
	path := filepath.Join(t.TempDir(), "t")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	tb := &Tables{File: m, Off: []int{0}, ChunkStart: []int{0, n / 2, n}}
	sum := func() (s uint64) {
		for _, v := range U32s(m.Bytes(), n) {
			s += uint64(v)
		}
		return s
	}
	before := sum()
	if r := m.Resident(); r < 0 {
		t.Skip("no /proc/self/smaps")
	} else if r < int64(len(data))/2 {
		t.Fatalf("%d bytes resident after reading %d", r, len(data))
	}
	tb.ReleaseAll()
	if r := m.Resident(); r != 0 {
		t.Fatalf("%d bytes resident after ReleaseAll", r)
	}
	tb.Need(0)
	if sum() != before {
		t.Fatal("the tables read differently after ReleaseAll")
	}
}
