package model

import (
	"sync/atomic"
	"unsafe"
)

// Shared float32 memory is read and written through these helpers so that
// a build with the race detector can make every access atomic (invariant
// 6); raceSafe is set by the build tag race (hogwild_race.go).

func bitsOf(x *float32) *uint32 { return (*uint32)(unsafe.Pointer(x)) }

// loadAtomic copies src to dst with one atomic load per element.
func loadAtomic(dst, src []float32) {
	dst = dst[:len(src)]
	for i := range src {
		dst[i] = float32frombits(atomic.LoadUint32(bitsOf(&src[i])))
	}
}

// storeAtomic copies src to dst with one atomic store per element.
func storeAtomic(dst, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		atomic.StoreUint32(bitsOf(&dst[i]), float32bits(v))
	}
}

func float32bits(f float32) uint32     { return *(*uint32)(unsafe.Pointer(&f)) }
func float32frombits(b uint32) float32 { return *(*float32)(unsafe.Pointer(&b)) }

// load copies shared memory src into private dst.
func load(dst, src []float32) {
	if raceSafe {
		loadAtomic(dst, src)
		return
	}
	copy(dst, src)
}

// store copies private src into shared memory dst.
func store(dst, src []float32) {
	if raceSafe {
		storeAtomic(dst, src)
		return
	}
	copy(dst, src)
}

// load1 and store1 read and write one shared element.
func load1(x *float32) float32 {
	if raceSafe {
		return float32frombits(atomic.LoadUint32(bitsOf(x)))
	}
	return *x
}

func store1(x *float32, v float32) {
	if raceSafe {
		atomic.StoreUint32(bitsOf(x), float32bits(v))
		return
	}
	*x = v
}
