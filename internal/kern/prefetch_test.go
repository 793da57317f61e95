package kern

import (
	"slices"
	"testing"
)

// TestPrefetch: prefetching any part of a slice, empty or not, at any
// offset and length (lines straddling its ends included), leaves every
// value as it was.
func TestPrefetch(t *testing.T) {
	Prefetch[float32](nil)
	x := make([]float32, 300)
	for i := range x {
		x[i] = float32(i) * 0.5
	}
	want := slices.Clone(x)
	for lo := 0; lo < 40; lo++ {
		for hi := lo; hi <= len(x); hi += 7 {
			Prefetch(x[lo:hi])
		}
	}
	ids := make([]int32, 100)
	for i := range ids {
		PrefetchInt32(&ids[i])
	}
	if !slices.Equal(x, want) || slices.ContainsFunc(ids, func(v int32) bool { return v != 0 }) {
		t.Fatal("Prefetch changed memory")
	}
}
