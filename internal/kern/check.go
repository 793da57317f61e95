package kern

import (
	"fmt"
	"math"
)

// checkVec panics unless y is at least as long as x.
func checkVec(fn string, nx, ny int, yName string) {
	if ny < nx {
		panic(fmt.Sprintf("kern: %s: len(%s) = %d < len(x) = %d", fn, yName, ny, nx))
	}
}

// checkDims panics on a negative dimension.
func checkDims(fn string, m, n, k int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("kern: %s: negative dimension m=%d n=%d k=%d", fn, m, n, k))
	}
}

// checkMat panics unless s holds a rows×cols row-major matrix with leading
// dimension ld: ld >= cols when there is more than one row, and
// len(s) >= (rows-1)*ld + cols. An empty matrix needs nothing.
func checkMat(fn, name string, s []float32, rows, cols, ld int) {
	if rows == 0 || cols == 0 {
		return
	}
	if ld < 0 || (rows > 1 && ld < cols) {
		panic(fmt.Sprintf("kern: %s: ld%s = %d is less than the %d columns of %s", fn, name, ld, cols, name))
	}
	if ld > 0 && rows-1 > (math.MaxInt-cols)/ld {
		panic(fmt.Sprintf("kern: %s: %s is %d×%d with ld%s = %d, too large to address", fn, name, rows, cols, name, ld))
	}
	if need := (rows-1)*ld + cols; len(s) < need {
		panic(fmt.Sprintf("kern: %s: len(%s) = %d, but a %d×%d %s with ld%s = %d needs %d", fn, name, len(s), rows, cols, name, name, ld, need))
	}
}
