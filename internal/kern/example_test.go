package kern_test

import (
	"fmt"

	"github.com/batchprep/batchprep/internal/kern"
)

// Scoring two positives against three candidates by dot product, then the
// gradient of the scores with respect to the positives.
func ExampleGemmNT() {
	const d = 2
	lhs := []float32{ // 2×d
		1, 0,
		0, 2,
	}
	cand := []float32{ // 3×d
		1, 1,
		2, 0,
		0, 3,
	}
	scores := make([]float32, 2*3)
	kern.GemmNT(2, 3, d, lhs, d, cand, d, scores, 3, false) // scores = lhs·candᵀ
	fmt.Println("scores", scores)

	dscores := []float32{ // ∂loss/∂scores, 2×3
		1, 0, 0,
		0, 0, 1,
	}
	dlhs := make([]float32, 2*d)
	kern.GemmNN(2, d, 3, dscores, 3, cand, d, dlhs, d, false) // dlhs = dscores·cand
	fmt.Println("dlhs", dlhs)

	dcand := make([]float32, 3*d)
	kern.GemmTN(3, d, 2, dscores, 3, lhs, d, dcand, d, false) // dcand = dscoresᵀ·lhs
	fmt.Println("dcand", dcand)
	// Output:
	// scores [1 2 0 2 0 6]
	// dlhs [1 1 0 3]
	// dcand [1 0 0 0 0 2]
}

func ExampleAxpy() {
	row := []float32{1, 2, 3}
	grad := []float32{0.5, 0.5, -1}
	kern.Axpy(-0.1, grad, row) // row -= 0.1·grad
	fmt.Println(row, kern.Dot(grad, grad))
	// Output: [0.95 1.95 3.1] 1.5
}
