package bucket

import (
	"flag"
	"fmt"
	"testing"

	"github.com/batchprep/batchprep/internal/mix"
)

var table = flag.Bool("table", false, "print the partition-load comparison of docs/bucket-orders.md")

// TestLoadsTable prints, for P = 4, 16, 64, each order's partition loads per
// pass and its consecutive buckets sharing a partition, averaged over 100
// passes (seeds 0..99). Run: go test ./graph/bucket -run LoadsTable -table -v
func TestLoadsTable(t *testing.T) {
	if !*table {
		t.Skip("prints a docs table; run with -table")
	}
	const passes = 100
	fmt.Println("| P | buckets | order | loads/pass (mean) | min | max | loads/bucket | sharing steps (mean) |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, p := range []int{4, 16, 64} {
		for _, name := range Names {
			sum, share, lo, hi := 0, 0, 1<<30, 0
			for s := uint64(0); s < passes; s++ {
				o, _ := Make(name, p, p, mix.Rand(s, 1))
				l := Loads(o)
				sum, share, lo, hi = sum+l, share+Sharing(o), min(lo, l), max(hi, l)
			}
			fmt.Printf("| %d | %d | %s | %.1f | %d | %d | %.3f | %.1f of %d |\n", p, p*p, name,
				float64(sum)/passes, lo, hi, float64(sum)/passes/float64(p*p), float64(share)/passes, p*p-1)
		}
	}
}
