package bucket_test

import (
	"fmt"

	"github.com/batchprep/batchprep/graph/bucket"
	"github.com/batchprep/batchprep/internal/mix"
)

// The buffer order of a 16 x 16 grid for a buffer of 4 partitions, and
// the partition loads it causes with that buffer, beside PBG's default
// order and the fewest any order can cause.
func ExampleBufferOrder() {
	rng := mix.Rand(0, 1) // derive the stream from the seed and the pass by mixing
	order := bucket.BufferOrder(16, 16, 4, rng)
	inside := bucket.InsideOutOrder(16, 16, mix.Rand(0, 1))
	fmt.Println(len(order), "buckets")
	fmt.Println("buffer order:", bucket.BufferLoads(order, 4), "loads")
	fmt.Println("inside_out:  ", bucket.BufferLoads(inside, 4), "loads")
	fmt.Println("lower bound: ", bucket.LowerBound(16, 16, 4), "loads")
	// Output:
	// 256 buckets
	// buffer order: 46 loads
	// inside_out:   94 loads
	// lower bound:  42 loads
}
