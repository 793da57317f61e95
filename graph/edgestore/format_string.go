package edgestore

import "fmt"

// String writes h as messages show it.
func (h Header) String() string {
	return fmt.Sprintf("(%d edges, weights %t, bucket (%d,%d))", h.Edges, h.Weights, h.Lhs, h.Rhs)
}

// String writes f as messages show it.
func (f FileManifest) String() string {
	return fmt.Sprintf("(name %q, %d bytes, crc32c %d)", f.Name, f.Bytes, f.CRC32C)
}
