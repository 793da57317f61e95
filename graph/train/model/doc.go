// Package model holds the mathematics of PyTorch-BigGraph-style embedding
// models, each with its exact gradient: relation operators (none,
// translation, diagonal, complex_diagonal, linear, affine), comparators
// (dot, cos, l2, squared_l2), losses (ranking, logistic, softmax), the N3
// regularizer, embedding tables with row-wise Adagrad and Adagrad for
// dense parameters, and the batch step that scores a batch's positives
// against batch and uniform negatives (graph/train runs it on workers).
//
// Shapes: matrices are row-major float32, one row per entity or edge, d
// columns (the config's dimension). All dense products go through
// internal/kern.
//
// Invariants (tests cite them by number):
//
//  1. Every Operator's Backward is the derivative of its Forward, with
//     respect to the input rows and to the parameters (checked by finite
//     differences).
//  2. Every Comparator's Backward is the derivative of its Forward with
//     respect to the fixed rows, the positive rows and the candidates.
//  3. Every Loss's gradient is the derivative of its value; masked
//     negatives (score Masked) contribute neither loss nor gradient.
//  4. The batch step's parameter gradients are the derivative of its loss
//     (the sum of the per-direction losses and the regularizer), for every
//     operator, comparator, loss, relation mode and negative setting.
//  5. Row-wise Adagrad: a row x with gradient g takes acc += mean(g²),
//     x -= lr·g/(sqrt(acc)+1e-10); dense Adagrad the same per element. Rows
//     absent from a batch are untouched.
//  6. Tables are shared by Hogwild workers without locks. Under the race
//     detector (build tag race) every shared read and write is an atomic
//     32-bit load or store, so `go test -race` sees no race; updates may
//     still be lost, as in Hogwild. Without the tag they are plain memory
//     accesses.
//  7. Randomness (uniform negatives; with StepPools, from every table of a
//     side's Pool) comes only from the *rand.Rand the
//     caller passes, derived from the batch's coordinates.
//  8. The memory hints for large tables (SetMemoryHints: transparent huge
//     pages on Linux, rows prefetched ahead on amd64) are platform-dependent
//     but change no value and no order of arithmetic: a step gives the same
//     bits with them on or off, on every platform.
//  9. Where a worker's row indexes and summed gradients live (the Go heap,
//     or mappings given back by Release: NewMappedWorker) changes no value:
//     a mapped worker's steps give the same bits as an ordinary one's.
//  10. Early updates (early.go): a uniform negative that occurs once in a
//     batch takes its Adagrad step as soon as its gradient is known, while
//     its row is still in cache, instead of after the batch. No later chunk
//     of the batch reads that row, so a step gives the same bits with early
//     updates on or off. They are on with the memory hints.
package model
