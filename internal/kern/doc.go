// Package kern holds the dense float32 kernels that graph training spends its
// time in: dot products, axpy and the three matrix products of a scoring
// step (forward A·Bᵀ, backward dS·B and dSᵀ·A).
//
// Matrices are row-major slices with a leading dimension (the distance
// between the starts of two rows), as in BLAS. Every kernel has a plain Go
// reference implementation in ref.go; faster implementations must give the
// same results up to float32 rounding of a reordered sum, which the tests
// check against the reference on random shapes.
//
// Invariants (tests cite them by number):
//
//  1. Each kernel reads only the elements its shape names and writes only
//     C's m×n elements (or y's len(x) elements); the rest of each slice is
//     untouched.
//  2. With accumulate false, C's old contents are ignored (NaN in C does not
//     leak into the result); with accumulate true the product is added to C.
//  3. The result agrees with the reference within 1e-5 relative error per
//     element for k <= 4096.
package kern
