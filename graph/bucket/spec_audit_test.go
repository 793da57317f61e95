package bucket

// SPEC conformance audit (docs/spec-conformance.md): uniformity of whole
// orders (SPEC B2.2), beyond the first bucket that order_test.go checks.

import (
	"testing"

	"github.com/batchprep/batchprep/internal/mix"
)

func auditChi2(counts map[string]float64, cells int, expect float64) float64 {
	x := 0.0
	for _, c := range counts {
		x += (c - expect) * (c - expect) / expect
	}
	// cells never seen count (0 - expect)^2 / expect each
	x += float64(cells-len(counts)) * expect
	return x
}

// SPEC B2.2 "random: all buckets, uniformly shuffled": every one of the
// 4! = 24 orders of a 2x2 graph is equally likely. Chi-square with 23
// degrees of freedom over 24,000 fixed seeds; 56.89 has an upper tail of
// 1.1e-4, so a correct shuffle fails for a given seed set with probability 1.1e-4
// (the seeds are fixed: the test is deterministic).
func TestAuditRandomOrderUniform(t *testing.T) {
	const n = 24000
	counts := map[string]float64{}
	for s := uint64(0); s < n; s++ {
		o, err := Make("random", 2, 2, mix.Rand(s, 0xa0d17))
		if err != nil {
			t.Fatal(err)
		}
		key := ""
		for _, b := range o {
			key += string(rune('0'+b.Lhs)) + string(rune('0'+b.Rhs)) + " "
		}
		counts[key]++
	}
	if len(counts) > 24 {
		t.Fatalf("%d distinct orders of 4 buckets", len(counts))
	}
	if x := auditChi2(counts, 24, n/24.0); x > 56.89 {
		t.Fatalf("chi-square %.1f > 56.89 (23 dof): random orders not uniform: %v", x, counts)
	}
}

// SPEC B2.2 "affinity: start at a random bucket": the first bucket of an
// affinity order is uniform over the 9 buckets of a 3x3 graph. Chi-square
// with 8 degrees of freedom over 18,000 fixed seeds; 31.83 has an upper
// tail of 1.0e-4.
func TestAuditAffinityStartUniform(t *testing.T) {
	const n = 18000
	counts := map[string]float64{}
	for s := uint64(0); s < n; s++ {
		o, err := Make("affinity", 3, 3, mix.Rand(s, 0xaff))
		if err != nil {
			t.Fatal(err)
		}
		counts[string(rune('0'+o[0].Lhs))+string(rune('0'+o[0].Rhs))]++
	}
	if x := auditChi2(counts, 9, n/9.0); x > 31.83 {
		t.Fatalf("chi-square %.1f > 31.83 (8 dof): affinity's first bucket not uniform: %v", x, counts)
	}
}
