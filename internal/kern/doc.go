// Package kern holds the dense float32 kernels that graph training spends its
// time in: dot products, axpy and the three matrix products of a scoring
// step (forward A·Bᵀ, backward dS·B and dSᵀ·A).
//
// Matrices are row-major slices with a leading dimension (the distance
// between the starts of two rows), as in BLAS. Every kernel has a plain Go
// reference implementation in ref.go. Two faster implementations exist:
// AVX2+FMA assembly on amd64 (chosen at run time when the CPU and OS
// support it) and a portable pure-Go one, used elsewhere, on older CPUs and
// under the build tag purego. Implementation names the one in use. The
// tests run every implementation the machine can run, in one binary.
//
// Prefetch is a hint beside the kernels: it asks the CPU to fetch a slice's
// cache lines ahead of use (PREFETCHT0 on amd64, nothing under purego or
// elsewhere) and changes no memory.
//
// The kernels are safe for concurrent use: they keep no state, and calls
// that write disjoint parts of memory do not interfere.
//
// Invariants (tests cite them by number):
//
//  1. Each kernel reads only the elements its shape names and writes only
//     C's m×n elements (or y's len(x) elements); the rest of each slice, and
//     memory past its end, is untouched.
//  2. With accumulate false, C's old contents are ignored (NaN in C does not
//     leak into the result); with accumulate true the product is added to C.
//     k = 0 gives C = 0, or leaves C unchanged when accumulating.
//  3. Each element of the result is within 1e-5·(Σ_p |A_ip·B_pj| + |C_ij|
//     when accumulating) of the exact value: the error of a float32 sum
//     taken in another order. The tests check this for k up to 600.
//  4. Arguments are checked before any element is touched: a negative size,
//     a leading dimension smaller than a row (when there is more than one
//     row), or a slice too short for its shape panics with a message
//     "kern: Func: ..." naming the argument. Empty products need no data.
//  5. An implementation's result depends only on the shape and the values:
//     the same call gives the same bits, whatever the slices' alignment and
//     leading dimensions.
package kern
