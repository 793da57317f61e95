package kern

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// FuzzGemm checks invariants 1-3 for every implementation on a fuzzed
// product: the operation, m, n, k (k reaches past one block of 256), the
// padding of the leading dimensions, the start offsets, accumulate and the
// values' seed.
func FuzzGemm(f *testing.F) {
	f.Add(uint8(0), uint8(50), uint8(105), uint16(100), uint8(0), uint8(0), false, uint64(1))
	f.Add(uint8(1), uint8(7), uint8(17), uint16(257), uint8(3), uint8(5), true, uint64(2))
	f.Add(uint8(2), uint8(11), uint8(4), uint16(9), uint8(1), uint8(1), false, uint64(3))
	f.Add(uint8(2), uint8(0), uint8(3), uint16(0), uint8(2), uint8(3), true, uint64(4))
	f.Fuzz(func(t *testing.T, op, m, n uint8, k uint16, pad, off uint8, acc bool, seed uint64) {
		s := newShape([]string{"NT", "NN", "TN"}[op%3], int(m%40), int(n%70), int(k%600), int(pad%5), int(off%9), acc)
		rng := rand.New(rand.NewPCG(seed, 99))
		for _, im := range impls(t) {
			if msg := checkShape(im, s, rng); msg != "" {
				t.Fatalf("%v: %s", s, msg)
			}
		}
	})
}

// FuzzSoftmax checks Softmax for every implementation on rows made of the
// fuzzed bytes read as float32s (any bit pattern: NaNs, infinities,
// subnormals), against the float64 definition.
func FuzzSoftmax(f *testing.F) {
	f.Add([]byte{0, 0, 128, 63, 0, 0, 0, 64})
	f.Add([]byte{0, 0, 128, 255, 0, 0, 128, 63, 0, 0, 192, 127})
	f.Fuzz(func(t *testing.T, raw []byte) {
		x := make([]float32, len(raw)/4)
		for i := range x {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		for _, im := range impls(t) {
			checkSoftmax(t, im, x)
		}
	})
}
