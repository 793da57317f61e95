//go:build !linux

package model

// mapFloats is a plain allocation outside Linux: the table's memory comes
// back after a collection once released.
func mapFloats(n int) ([]float32, []byte) { return makeHuge[float32](n), nil }

// unmapBytes does nothing outside Linux.
func unmapBytes(mem []byte) {}
