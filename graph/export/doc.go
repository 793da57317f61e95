// Package export writes a trained model in a form that needs no batchprep
// to use: every entity's embedding with its name, every relation's
// operator parameters with its name, and the comparator, as TSV or as a
// checksummed binary file (layouts in tsv.go, binary.go and
// docs/training.md, with the scoring function that reproduces eval), and
// reads the binary format back.
//
// Invariants (tests cite them by number):
//
//  1. TSV: one line per entity, "type<TAB>name<TAB>v1<TAB>...<TAB>vd",
//     types in sorted order, entities in dictionary order (partition,
//     then offset); then "@comparator<TAB>name"; then one line per
//     relation and side, "@relation<TAB>name<TAB>lhs type<TAB>rhs type
//     <TAB>side<TAB>operator<TAB>p1<TAB>...<TAB>pn", relations in id
//     order, side rhs (and then lhs with dynamic relations). Values print so that they parse back to the
//     same float32. An entity type whose name starts with '@' is refused.
//  2. Binary: Decode(Encode(x)) == x; a file with a wrong magic, length or
//     checksum is an error, never a partial result. Files of the first
//     layout (BPEMBED1: entities only) are still read.
//  3. Relation parameters are the checkpoint's, in the operator's own
//     order (see Relations); side rhs is the operator applied to the rhs
//     entity, side lhs (dynamic relations only) the one applied to the lhs.
package export

// Model is what an export holds.
type Model struct {
	Comparator string     // cos, dot, l2 or squared_l2 ("" in a BPEMBED1 file)
	Types      []Type     // sorted by name
	Relations  []Relation // by relation id, side rhs then lhs
}

// Type is the embeddings of one entity type, by dictionary order.
type Type struct {
	Name  string
	Names []string
	Dim   int
	Emb   []float32 // len(Names)×Dim, row-major
}

// Relation is one relation's operator parameters on one side.
type Relation struct {
	Name     string    // the relation's name
	Lhs, Rhs string    // the entity types of its lhs and rhs
	Side     string    // "rhs" or "lhs"
	Operator string    // none, translation, diagonal, complex_diagonal, linear, affine
	Params   []float32 // see Relations for the order
}
