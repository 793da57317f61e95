package bucket

import "github.com/batchprep/batchprep/graph"

// Loads counts the partition loads an order causes: a bucket needs its lhs
// and rhs partitions in memory (one partition for a diagonal bucket, as lhs
// and rhs index the same partitions); moving to the next bucket loads each
// partition it needs that the current bucket does not hold. The first
// bucket's loads (1 or 2) are counted too.
func Loads(order []graph.Bucket) int {
	n := 0
	var prev graph.Bucket
	for i, b := range order {
		held := func(p int) bool { return i > 0 && (p == prev.Lhs || p == prev.Rhs) }
		if !held(b.Lhs) {
			n++
		}
		if b.Rhs != b.Lhs && !held(b.Rhs) {
			n++
		}
		prev = b
	}
	return n
}

// Sharing counts the consecutive pairs of order that share a partition.
func Sharing(order []graph.Bucket) int {
	n := 0
	for i := 1; i < len(order); i++ {
		if Shares(order[i-1], order[i]) {
			n++
		}
	}
	return n
}
