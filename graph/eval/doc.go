// Package eval is filtered link-prediction evaluation of a trained
// checkpoint: each test edge's rhs is ranked among all entities of its
// type, and its lhs likewise, against the model's scores.
//
// Invariants (tests cite them by number):
//
//  1. Every entity of the corrupted side's type, over all its partitions,
//     is a candidate.
//  2. Filtering: a candidate that makes a known true edge (one of the
//     filter files' edges or of the test edges themselves) other than the
//     edge being ranked is removed.
//  3. Ties count against the true entity: rank = 1 + the number of
//     remaining candidates scoring at least as high as it.
//  4. The metrics (count, MRR, Hits@1/3/10, mean rank) are means over both
//     sides of every ranked edge (sides with disabled negatives are not
//     ranked); a test edge naming an entity or relation the dictionary does
//     not know is counted in Unknown, never silently dropped; such edges in
//     filter files are skipped (they cannot be candidates) and counted too.
//  5. Parsing: empty lines and lines starting with '#' are skipped; a line
//     with too few fields is an error naming file, line and column.
package eval
