package graph

import (
	"slices"
	"testing"
)

func TestBucketPartitions(t *testing.T) {
	for _, c := range []struct {
		b    Bucket
		want []int
	}{{Bucket{2, 2}, []int{2}}, {Bucket{0, 3}, []int{0, 3}}, {Bucket{3, 0}, []int{3, 0}}} {
		if got := c.b.Partitions(); !slices.Equal(got, c.want) {
			t.Errorf("%v.Partitions() = %v, want %v", c.b, got, c.want)
		}
		for p := range 4 {
			if got, want := c.b.Needs(p), slices.Contains(c.want, p); got != want {
				t.Errorf("%v.Needs(%d) = %v, want %v", c.b, p, got, want)
			}
		}
	}
}
