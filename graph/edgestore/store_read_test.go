package edgestore

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/batchprep/batchprep/graph"
)

// largestBucket returns the index and edges of the largest bucket of set 0.
func largestBucket(want stored) (int, graph.Edges) {
	best := 0
	for i, e := range want[0] {
		if e.Len() > want[0][best].Len() {
			best = i
		}
	}
	return best, want[0][best]
}

// Invariant 3: a column flipped on disk is caught by the first ReadEdges,
// whether it reads the whole bucket (checked over the bytes it read) or a
// part (the file is checked first); dst is left as it was, and the error
// names the file. NumEdges checks only size and header.
func TestReadEdgesVerifiesOnFirstUse(t *testing.T) {
	for _, weights := range []bool{false, true} {
		dir := t.TempDir()
		c := testConfig(t, dir, 2, 1)
		want, err := writeStoreN(t, c, 3, weights, WriteOptions{NoSync: true}, 200000)
		if err != nil {
			t.Fatal(err)
		}
		idx, we := largestBucket(want)
		b := graph.Bucket{Lhs: idx / 2, Rhs: idx % 2}
		victim := filepath.Join(c.EdgePaths[0], BucketFile(b.Lhs, b.Rhs))
		data, err := os.ReadFile(victim)
		if err != nil {
			t.Fatal(err)
		}
		n := we.Len()
		offs, _ := layout(int64(n), weights)
		for _, col := range Columns(weights) {
			for _, whole := range []bool{true, false} {
				d := append([]byte(nil), data...)
				d[offs[col]+int64(n)*colWidth(col)-1] ^= 0x10 // last byte of the column
				if err := os.WriteFile(victim, d, 0o644); err != nil {
					t.Fatal(err)
				}
				st, err := Open(c)
				if err != nil {
					t.Fatal(err)
				}
				if got, err := st.NumEdges(0, b); err != nil || got != n {
					t.Fatalf("NumEdges on column damage: %d, %v", got, err)
				}
				dst := graph.Edges{Lhs: []uint32{7}, Rhs: []uint32{8}, Rel: []uint32{9}, Ordinal: []uint64{10}}
				if weights {
					dst.Weight = []float32{11}
				}
				before := dst
				begin := 0
				if !whole {
					begin = 1
				}
				err = st.ReadEdges(0, b, begin, n, &dst)
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), victim) || !strings.Contains(err.Error(), col) {
					t.Errorf("weights=%v column %s whole=%v: %v", weights, col, whole, err)
				}
				if !reflect.DeepEqual(dst, before) {
					t.Errorf("column %s: dst changed by a failed read", col)
				}
				// Still refused on the next read: a failure is not remembered
				// as verified.
				if err := st.ReadEdges(0, b, 0, n, &graph.Edges{}); !errors.Is(err, ErrCorrupt) {
					t.Errorf("column %s: second read %v", col, err)
				}
				st.Close()
			}
		}
		// Header damage is caught already by NumEdges.
		d := append([]byte(nil), data...)
		d[20] ^= 1
		os.WriteFile(victim, d, 0o644)
		st, _ := Open(c)
		if _, err := st.NumEdges(0, b); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), victim) {
			t.Errorf("header damage: %v", err)
		}
		st.Close()
		// Intact again: reads back, appended after what dst held.
		os.WriteFile(victim, data, 0o644)
		st, _ = Open(c)
		dst := graph.Edges{}
		if err := st.ReadEdges(0, b, 0, n/2, &dst); err != nil {
			t.Fatal(err)
		}
		if err := st.ReadEdges(0, b, n/2, n, &dst); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(dst, we) {
			t.Error("intact bucket read in two parts differs")
		}
		st.Close()
	}
}

// Invariant 4: the portable (any byte order) column reader gives the same
// values and checksum as the direct one, for every column type.
func TestReadColumnPortable(t *testing.T) {
	dir := t.TempDir()
	c := testConfig(t, dir, 1, 1)
	want, err := writeStoreN(t, c, 5, true, WriteOptions{NoSync: true}, 100000)
	if err != nil {
		t.Fatal(err)
	}
	_, we := largestBucket(want)
	n := we.Len()
	f, err := os.Open(filepath.Join(c.EdgePaths[0], BucketFile(0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bm := BucketManifest{}
	m, err := os.ReadFile(filepath.Join(c.EdgePaths[0], EdgeManifestName))
	if err != nil {
		t.Fatal(err)
	}
	em, err := DecodeEdgeManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	bm = em.Buckets[0]
	offs, _ := layout(int64(n), true)
	check := func(col string, fast, slow func() (uint32, error), a, b any) {
		t.Helper()
		s1, err1 := fast()
		s2, err2 := slow()
		if err1 != nil || err2 != nil || s1 != s2 || s1 != bm.CRC32C[col] || !reflect.DeepEqual(a, b) {
			t.Errorf("column %s: %08x %v / %08x %v (manifest %08x)", col, s1, err1, s2, err2, bm.CRC32C[col])
		}
	}
	u1, u2 := make([]uint32, n), make([]uint32, n)
	check(ColRel, func() (uint32, error) { return readColumn(f, offs[ColRel], u1, true) },
		func() (uint32, error) { return readColumnPortable(f, offs[ColRel], u2, true) }, u1, u2)
	if !reflect.DeepEqual(u1, we.Rel) {
		t.Error("rel column differs from what was written")
	}
	w1, w2 := make([]float32, n), make([]float32, n)
	check(ColWeight, func() (uint32, error) { return readColumn(f, offs[ColWeight], w1, true) },
		func() (uint32, error) { return readColumnPortable(f, offs[ColWeight], w2, true) }, w1, w2)
	if !reflect.DeepEqual(w2, we.Weight) {
		t.Error("weight column differs from what was written")
	}
	o1, o2 := make([]uint64, n), make([]uint64, n)
	check(ColOrdinal, func() (uint32, error) { return readColumn(f, offs[ColOrdinal], o1, true) },
		func() (uint32, error) { return readColumnPortable(f, offs[ColOrdinal], o2, true) }, o1, o2)
	if !reflect.DeepEqual(o2, we.Ordinal) {
		t.Error("ordinal column differs from what was written")
	}
}

// Invariant 4: a read into columns with room allocates no buffer that grows
// with the range (no scratch copy), on first use (verifying) and after.
func TestReadEdgesAllocatesNoBuffer(t *testing.T) {
	dir := t.TempDir()
	c := testConfig(t, dir, 1, 1)
	want, err := writeStoreN(t, c, 9, false, WriteOptions{NoSync: true}, 300000)
	if err != nil {
		t.Fatal(err)
	}
	_, we := largestBucket(want)
	n := we.Len()
	st, err := Open(c)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	dst := graph.Edges{Lhs: make([]uint32, 0, n), Rhs: make([]uint32, 0, n), Rel: make([]uint32, 0, n), Ordinal: make([]uint64, 0, n)}
	for round := 0; round < 2; round++ {
		dst.Reset()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		if err := st.ReadEdges(0, graph.Bucket{}, 0, n, &dst); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&m1)
		if got := m1.TotalAlloc - m0.TotalAlloc; got > 64<<10 || !reflect.DeepEqual(dst, we) {
			t.Errorf("round %d: %d bytes allocated reading %d edges (or data differs)", round, got, n)
		}
	}
}

// Invariants 3 and 4: ReadEdgesRelationFirst reads what ReadEdges reads and
// calls relReady once, before it returns, with dst.Rel complete (checked);
// a damaged relation column never reaches relReady.
func TestReadEdgesRelationFirst(t *testing.T) {
	dir := t.TempDir()
	c := testConfig(t, dir, 2, 1)
	want, err := writeStoreN(t, c, 4, true, WriteOptions{NoSync: true}, 300000)
	if err != nil {
		t.Fatal(err)
	}
	idx, we := largestBucket(want)
	b := graph.Bucket{Lhs: idx / 2, Rhs: idx % 2}
	n := we.Len()
	st, err := Open(c)
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 2; round++ { // verifying, then verified
		for _, r := range [][2]int{{0, n}, {n / 3, n}, {0, 10}} {
			var got graph.Edges
			calls := 0
			err := st.ReadEdgesRelationFirst(0, b, r[0], r[1], &got, func() {
				calls++
				if !reflect.DeepEqual(got.Rel, we.Rel[r[0]:r[1]]) {
					t.Errorf("range %v: relations not complete in relReady", r)
				}
			})
			if err != nil || calls != 1 {
				t.Fatalf("range %v: %v, %d calls", r, err, calls)
			}
			if !reflect.DeepEqual(got.Ordinal, we.Ordinal[r[0]:r[1]]) || !reflect.DeepEqual(got.Weight, we.Weight[r[0]:r[1]]) {
				t.Fatalf("range %v: columns differ", r)
			}
		}
	}
	st.Close()
	victim := filepath.Join(c.EdgePaths[0], BucketFile(b.Lhs, b.Rhs))
	data, _ := os.ReadFile(victim)
	offs, _ := layout(int64(n), true)
	data[offs[ColRel]+5] ^= 4
	os.WriteFile(victim, data, 0o644)
	st, _ = Open(c)
	defer st.Close()
	err = st.ReadEdgesRelationFirst(0, b, 0, n, &graph.Edges{}, func() { t.Error("relReady called on a damaged relation column") })
	if !errors.Is(err, ErrCorrupt) {
		t.Errorf("damaged relation column: %v", err)
	}
}
