package plan

import "math/rand/v2"

// sampleHoldout marks k distinct positions of [0, n) in the bitmap marks
// (bit i of marks[i/32]; len(marks) >= (n+31)/32, all zero on entry) with
// Floyd's algorithm: k draws, every k-subset equally likely (invariant 3).
func sampleHoldout(marks []uint32, n, k int, rng *rand.Rand) {
	for j := n - k; j < n; j++ {
		t := int(rng.Uint64N(uint64(j + 1)))
		if marked(marks, t) {
			t = j
		}
		marks[t>>5] |= 1 << (t & 31)
	}
}

func marked(marks []uint32, i int) bool { return marks[i>>5]>>(i&31)&1 != 0 }

// listMarked writes the marked positions of [0, n) to dst in ascending
// order and returns how many there were.
func listMarked(dst, marks []uint32, n int) int {
	c := 0
	for w, word := range marks[:(n+31)/32] {
		for word != 0 {
			b := word & -word
			dst[c] = uint32(w<<5) + uint32(trailingZeros(b))
			c++
			word ^= b
		}
	}
	return c
}
