//go:build !linux

package model

// mapFloats is a plain allocation outside Linux: the table's memory comes
// back after a collection once released.
func mapFloats(n int) ([]float32, []byte) { return makeHuge[float32](n), nil }

// mapBytes is a plain allocation outside Linux.
func mapBytes(n int, huge bool) []byte { return make([]byte, n) }

// remapBytes copies mem into a larger allocation outside Linux.
func remapBytes(mem []byte, n int) []byte {
	out := make([]byte, n)
	copy(out, mem)
	return out
}

// unmapBytes does nothing outside Linux.
func unmapBytes(mem []byte) {}
