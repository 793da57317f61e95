package kern

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// guarded returns a slice of n float32s that ends where an inaccessible
// page begins, so that reading one element past its end faults.
func guarded(t *testing.T, n int) []float32 {
	page := unix.Getpagesize()
	size := (n*4+page-1)/page*page + page
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		t.Fatalf("mmap: %v", err)
	}
	t.Cleanup(func() { unix.Munmap(mem) })
	if err := unix.Mprotect(mem[size-page:], unix.PROT_NONE); err != nil {
		t.Fatalf("mprotect: %v", err)
	}
	if n == 0 {
		return []float32{}
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&mem[size-page-n*4])), n)
}

// TestNoReadPastEnd places A, B and C (and the vectors of Dot, Axpy, Scale
// and Softmax) flush against an inaccessible page and runs every
// implementation: a kernel that reads or writes one element past a slice
// crashes the test (invariant 1, for memory outside the slices, which the
// NaN fill of checkShape cannot see).
func TestNoReadPastEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for trial := 0; trial < 120; trial++ {
		m, n, k := 1+rng.IntN(13), 1+rng.IntN(37), 1+rng.IntN(40)
		if trial%8 == 0 {
			k = 257 + rng.IntN(20)
		}
		for _, op := range []string{"NT", "NN", "TN"} {
			s := newShape(op, m, n, k, rng.IntN(3), 0, trial%2 == 0)
			a := guarded(t, matLen(s.aRows, s.aCols, s.lda))
			b := guarded(t, matLen(s.bRows, s.bCols, s.ldb))
			c := guarded(t, matLen(s.m, s.n, s.ldc))
			for i := range a {
				a[i] = float32(rng.NormFloat64())
			}
			for i := range b {
				b[i] = float32(rng.NormFloat64())
			}
			for _, im := range impls(t) {
				s.run(im, a, b, c)
			}
		}
	}
	for n := 0; n < 70; n++ {
		x, y := guarded(t, n), guarded(t, n)
		for _, im := range impls(t) {
			im.dot(x, y)
			im.axpy(2, x, y)
			im.scale(0.5, y)
			im.softmax(y)
		}
	}
}
