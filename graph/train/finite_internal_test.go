package train

import (
	"math"
	"math/rand/v2"
	"testing"
)

// firstBadConvert is the plain definition of firstBad: each value
// converted and tested (the scan before the bit test; the test's oracle
// and the benchmark's baseline).
func firstBadConvert(v []float32) int {
	for i, x := range v {
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return i
		}
	}
	return -1
}

// firstBad finds the first NaN or infinity wherever it is: in a block of
// eight, in the tail, at the boundaries of the split scan, with several
// bad values in different parts (the first wins), and never flags a
// finite extreme (the largest float32, subnormals, -0).
func TestFirstBad(t *testing.T) {
	bad := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc00001), math.Float32frombits(0xffffffff)}
	fine := []float32{math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.Copysign(0, -1)), 1e-40}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 8, 9, 63, finiteSplit - 1, finiteSplit, finiteSplit + 13, 3*finiteSplit + 5} {
		v := make([]float32, n)
		for i := range v {
			v[i] = fine[rng.IntN(len(fine))]
		}
		if got := firstBad(v); got != -1 {
			t.Fatalf("n=%d, all finite: firstBad %d", n, got)
		}
		if n == 0 {
			continue
		}
		at := []int{0, n - 1, n / 2, rng.IntN(n)}
		if n >= finiteSplit {
			at = append(at, n/2-1, n/2+1, n/3, (n+1)/2)
		}
		for _, i := range at {
			for _, j := range []int{-1, min(n-1, i+1+rng.IntN(n-i)), n - 1} {
				w := append([]float32(nil), v...)
				w[i] = bad[rng.IntN(len(bad))]
				if j > i {
					w[j] = bad[rng.IntN(len(bad))]
				}
				if got, want := firstBad(w), firstBadConvert(w); got != want || want != i {
					t.Fatalf("n=%d, bad at %d and %d: firstBad %d, the definition %d", n, i, j, got, want)
				}
			}
		}
	}
}

// BenchmarkFirstBad scans a partition's embeddings (950,000 rows of
// dimension 100, P = 4 on LiveJournal's entity count; 380 MB), all
// finite, as each bucket does, with firstBad and with the plain
// definition (convert), the baseline in the same run.
//
//	go test ./graph/train -run '^$' -bench FirstBad -count 6
func BenchmarkFirstBad(b *testing.B) {
	v := make([]float32, 950_000*100)
	for i := range v {
		v[i] = float32(i%1000) * 1e-3
	}
	for _, c := range []struct {
		name string
		f    func([]float32) int
	}{{"bits", firstBad}, {"convert", firstBadConvert}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(4 * len(v)))
			for b.Loop() {
				if c.f(v) != -1 {
					b.Fatal("a finite table flagged")
				}
			}
		})
	}
}
