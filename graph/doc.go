// Package graph holds the types shared by batchprep's graph half (the
// PyTorch-BigGraph batch preparation): edges as columns, and bucket
// coordinates. The subpackages do the work:
//
//	config     PBG-compatible configuration (TOML, JSON or PBG's Python), defaults, validation
//	edgestore  the on-disk format: entity dictionaries and one file per bucket
//	importer   edge lists (TSV/CSV/space) to an edge store
//	bucket     bucket orders: random, affinity, inside_out, outside_in, buffer
//	plan       the loop epoch > edge set > chunk > bucket: holdout, shuffle,
//	           worker shares, batches, and a resumable state
//	train      embeddings trained on the plan: Hogwild workers, partition
//	           swapping, crash-safe checkpoints every few buckets
//	           (train/model: operators, comparators, losses, Adagrad)
//	eval       filtered link-prediction ranking of a checkpoint
//	export     trained embeddings with names, as TSV or binary
package graph

// Bucket names the edges whose lhs entity is in partition Lhs and whose rhs
// entity is in partition Rhs.
type Bucket struct{ Lhs, Rhs int }

// Transpose returns the bucket with lhs and rhs swapped.
func (b Bucket) Transpose() Bucket { return Bucket{b.Rhs, b.Lhs} }

// Partitions lists the partitions b needs, once each: one for a diagonal
// bucket, lhs then rhs otherwise. Lhs partition p and rhs partition p count
// as the same partition (one entity type on both sides).
func (b Bucket) Partitions() []int {
	if b.Lhs == b.Rhs {
		return []int{b.Lhs}
	}
	return []int{b.Lhs, b.Rhs}
}

// Needs reports whether b needs partition p.
func (b Bucket) Needs(p int) bool { return b.Lhs == p || b.Rhs == p }

// Edges is a column store of edges. All slices have the same length, except
// Weight, which is nil when the edge set has no weights.
type Edges struct {
	Lhs, Rhs []uint32 // entity offsets inside their partitions
	Rel      []uint32 // relation index (config order), or dynamic relation id
	Weight   []float32
	Ordinal  []uint64 // 0-based index among the edge lines of the input file
}

// Len is the number of edges.
func (e *Edges) Len() int { return len(e.Rel) }

// Reset empties e, keeping its capacity.
func (e *Edges) Reset() {
	e.Lhs, e.Rhs, e.Rel, e.Ordinal = e.Lhs[:0], e.Rhs[:0], e.Rel[:0], e.Ordinal[:0]
	if e.Weight != nil {
		e.Weight = e.Weight[:0]
	}
}

// Reader gives the plan engine access to stored buckets. edgestore.Store
// implements it; tests use an in-memory one.
type Reader interface {
	// Partitions returns the number of lhs and rhs partitions.
	Partitions() (lhs, rhs int)
	// NumEdgeSets returns the number of edge sets (config edge_paths).
	NumEdgeSets() int
	// NumEdges returns the number of edges of bucket b in edge set s.
	NumEdges(s int, b Bucket) (int, error)
	// ReadEdges appends edges [begin, end) of bucket b in edge set s, in
	// storage order, to dst.
	ReadEdges(s int, b Bucket, begin, end int, dst *Edges) error
}
