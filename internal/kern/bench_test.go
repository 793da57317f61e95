package kern

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The benchmarks run the products of one training step of a PBG-style
// trainer: a chunk of 50 positives scored against 1050 candidates (50 from
// the batch, 1000 uniform) at dimension d. Forward: scores = lhs·candᵀ,
// GemmNT(50, 1050, d). Backward: dlhs = dscores·cand, GemmNN(50, d, 1050),
// and dcand = dscoresᵀ·lhs, GemmTN(1050, d, 50). Each is run for every
// implementation in the binary (ref, go, avx2), so one run compares them;
// the GFLOP/s metric counts 2·m·n·k per wall-clock second, cpu-GFLOP/s per
// second of the benchmark thread's CPU time (steadier on a shared machine:
// time the thread waits for a core is not counted).

func benchGemm(b *testing.B, f gemmFunc, m, n, k, lda, ldb, ldc, aLen, bLen int, acc bool) {
	rng := rand.New(rand.NewPCG(11, 12))
	a, bb, c := randSlice(rng, aLen), randSlice(rng, bLen), randSlice(rng, m*ldc)
	flops := 2 * float64(m) * float64(n) * float64(k)
	cpu := startThreadCPU(b)
	for b.Loop() {
		f(m, n, k, a, lda, bb, ldb, c, ldc, acc)
	}
	cpu.report(b, flops, "GFLOP/s")
}

func BenchmarkGemm(b *testing.B) {
	const pos, cand = 50, 1050
	for _, d := range []int{100, 400} {
		for _, im := range impls(b) {
			b.Run(fmt.Sprintf("op=NT/d=%d/impl=%s", d, im.name), func(b *testing.B) {
				benchGemm(b, im.gemmNT, pos, cand, d, d, d, cand, pos*d, cand*d, false)
			})
			b.Run(fmt.Sprintf("op=NN/d=%d/impl=%s", d, im.name), func(b *testing.B) {
				benchGemm(b, im.gemmNN, pos, d, cand, cand, d, d, pos*cand, cand*d, false)
			})
			b.Run(fmt.Sprintf("op=TN/d=%d/impl=%s", d, im.name), func(b *testing.B) {
				benchGemm(b, im.gemmTN, cand, d, pos, cand, d, d, pos*cand, pos*d, true)
			})
		}
	}
}

func BenchmarkDotAxpy(b *testing.B) {
	for _, d := range []int{100, 400} {
		rng := rand.New(rand.NewPCG(13, 14))
		x, y := randSlice(rng, d), randSlice(rng, d)
		for _, im := range impls(b) {
			b.Run(fmt.Sprintf("op=Dot/d=%d/impl=%s", d, im.name), func(b *testing.B) {
				var s float32
				cpu := startThreadCPU(b)
				for b.Loop() {
					s += im.dot(x, y)
				}
				cpu.report(b, 2*float64(d), "GFLOP/s")
				sink = s
			})
			b.Run(fmt.Sprintf("op=Axpy/d=%d/impl=%s", d, im.name), func(b *testing.B) {
				cpu := startThreadCPU(b)
				for b.Loop() {
					im.axpy(1e-3, x, y)
				}
				cpu.report(b, 2*float64(d), "GFLOP/s")
			})
		}
	}
}

var sink float32

// BenchmarkSoftmax normalizes one row of scores of a chunk: 1050 candidates.
func BenchmarkSoftmax(b *testing.B) {
	rng := rand.New(rand.NewPCG(15, 16))
	x := randSlice(rng, 1050)
	row := make([]float32, len(x))
	for _, im := range impls(b) {
		b.Run("n=1050/impl="+im.name, func(b *testing.B) {
			cpu := startThreadCPU(b)
			for b.Loop() {
				copy(row, x)
				sink += im.softmax(row)
			}
			cpu.report(b, float64(len(x)), "Gelem/s")
		})
	}
}
