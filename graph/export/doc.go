// Package export writes trained entity embeddings with their names, as
// TSV or as a checksummed binary file (layout in binary.go and
// docs/training.md), and reads the binary format back.
//
// Invariants (tests cite them by number):
//
//  1. TSV: one line per entity, "type<TAB>name<TAB>v1<TAB>...<TAB>vd",
//     types in sorted order, entities in dictionary order (partition,
//     then offset); values printed so that they parse back to the same
//     float32.
//  2. Binary: Decode(Encode(x)) == x; a file with a wrong magic, length or
//     checksum is an error, never a partial result.
package export

// Type is the embeddings of one entity type, by dictionary order.
type Type struct {
	Name  string
	Names []string
	Dim   int
	Emb   []float32 // len(Names)×Dim, row-major
}
