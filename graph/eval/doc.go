// Package eval is link-prediction evaluation of a trained checkpoint:
// each test edge's rhs is ranked among all entities of its type, and its
// lhs likewise, against the model's scores; filtered (RankEdges) or not
// (RankEdgesUnfiltered).
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
//     ranked; Report.Sides says which); a test edge naming an entity or
//     relation the dictionary does not know (a name in no imported file)
//     is counted in Unknown with the names, never silently dropped; such
//     edges in filter files are skipped (they cannot be candidates) and
//     counted too.
//  5. Parsing: empty lines and lines starting with '#' are skipped; a line
//     with too few fields is an error naming file, line and column.
//  6. A true entity whose score is NaN or infinite ranks below every
//     candidate (the worst rank) and is counted in NonFinite with examples;
//     a candidate scoring NaN counts against the true entity.
//  7. A stored edge set (StoredEdges) is ranked as a file of the same
//     edges would be: the dictionary is the import's, over every imported
//     file, so entities that no training edge names are ranked too (with
//     their untrained embeddings).
//  8. Unfiltered ranking (RankEdgesUnfiltered) is invariants 1, 3, 4 and 6
//     with no filtering: every entity of the type but the true one is a
//     candidate, whatever edges are known, as PBG's torchbiggraph_eval
//     ranks a relation with all_negs.
package eval
