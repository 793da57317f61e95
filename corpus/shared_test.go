package corpus

import "testing"

// TestSharedArrays: Iota and Ones hold what they say at every size, hand
// out prefixes of a few arrays that grow by doubling, and SharedIota and
// SharedOnes tell those from every other array.
func TestSharedArrays(t *testing.T) {
	for _, n := range []int{0, 1, 5, minShared, minShared + 1, 3 * minShared, 10} {
		a, b := Iota(n), Ones(n)
		if len(a) != n || cap(a) != n || len(b) != n || cap(b) != n {
			t.Fatalf("n=%d: len/cap %d/%d and %d/%d", n, len(a), cap(a), len(b), cap(b))
		}
		for i := range n {
			if a[i] != int32(i) || b[i] != 1 {
				t.Fatalf("n=%d: Iota[%d] = %d, Ones[%d] = %v", n, i, a[i], i, b[i])
			}
		}
		if n > 0 && (!SharedIota(a) || !SharedOnes(b) || !SharedIota(a[:1]) || !SharedOnes(b[:0])) {
			t.Fatalf("n=%d: a shared array not recognized", n)
		}
	}
	if SharedIota(nil) || SharedOnes(nil) || SharedIota(make([]int32, 4)) || SharedOnes([]float32{1, 1}) {
		t.Fatal("an array of its own taken for a shared one")
	}
	// A later suffix of a shared array is not a prefix; parsers never make one.
	if a := Iota(8); SharedIota(a[1:]) {
		t.Fatal("a suffix taken for a shared array")
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	for i := 1; i < len(shared.iota); i++ {
		if len(shared.iota[i]) < 2*len(shared.iota[i-1]) {
			t.Fatalf("iota array %d has %d elements after %d: want at least twice", i, len(shared.iota[i]), len(shared.iota[i-1]))
		}
	}
	if k := len(shared.iota); k > 3 { // 1, 2 and 4 times minShared
		t.Fatalf("%d iota arrays made, want at most 3", k)
	}
}

// IsIota and AllOnes recognize exactly the arrays Iota and Ones can stand
// for, empty ones included.
func TestIsIotaAllOnes(t *testing.T) {
	for _, c := range []struct {
		a    []int32
		want bool
	}{{nil, true}, {[]int32{0}, true}, {[]int32{0, 1, 2}, true}, {[]int32{1}, false}, {[]int32{0, 1, 1}, false}, {[]int32{0, 2}, false}} {
		if got := IsIota(c.a); got != c.want {
			t.Errorf("IsIota(%v) = %v", c.a, got)
		}
	}
	for _, c := range []struct {
		a    []float32
		want bool
	}{{nil, true}, {[]float32{1, 1}, true}, {[]float32{1, 0.5}, false}, {[]float32{-1}, false}} {
		if got := AllOnes(c.a); got != c.want {
			t.Errorf("AllOnes(%v) = %v", c.a, got)
		}
	}
	if !IsIota(Iota(9)) || !AllOnes(Ones(9)) {
		t.Error("the shared arrays are not recognized")
	}
}
