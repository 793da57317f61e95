// Package importer turns edge lists (TSV, CSV or blank-separated text) into
// a batchprep edge store (package edgestore), as PyTorch-BigGraph's
// import_from_tsv does, but deterministically, atomically and without
// dropping lines silently.
//
// Input. A file is a text edge list or a Parquet file (Options.Format,
// DetectFormat). In a Parquet file each row is an edge line, numbered by
// its row in the file, and the chosen columns are found by index or by
// name (parquet.go); the rest of this comment holds for both, with rows for
// lines. Each line is an edge; Options choose the lhs, rhs, optional
// relation and optional weight columns (0-based) and the delimiter. Lines
// that are empty or start with '#' are comments: skipped and not counted.
// A UTF-8 byte order mark on the first line and CR before LF are removed.
// The other lines are edge lines, numbered 0, 1, ... in file order: that
// number is the edge's ordinal, kept in storage. A bad edge line still
// takes its ordinal, so the ordinals of good edges do not depend on the
// error budget.
//
// Bad lines: fewer fields than the chosen columns need, a field count
// different from the file's first good line (csv's FieldsPerRecord rule),
// an empty chosen field, a quoted CSV field, an unknown relation (relation
// names must be the config's, except with dynamic_relations), a weight that
// is not a finite float, an entity or relation name that is not UTF-8.
// Each is a *LineError naming file, line and column; up to
// Options.MaxErrors of them are skipped and listed in the Report, one more
// fails the import with a *BudgetError.
//
// Relations. Without a relation column every edge has relation 0. With
// one, the field names a relation of the config (its index is the id), or,
// with dynamic_relations, any name: ids are given in order of first
// appearance across the files in order, and the names are stored in
// dynamic_rel_names.json. The relation's lhs and rhs entity types choose the
// dictionaries of the two entity fields (relation 0's with dynamic
// relations).
//
// Partitions. Each entity type's entities, in order of first appearance,
// are shuffled with a Fisher-Yates shuffle drawing unbiased bounded values
// from mix.Rand(seed, "import-p", fnv64a(type)); partition p of P then
// holds shuffled positions [ceil(p*N/P), ceil((p+1)*N/P)), and an entity's
// offset is its position minus its partition's start (PBG's rule).
// Unpartitioned types (1 partition) are in partition 0 of every bucket
// they appear in.
//
// Memory. All files are parsed before anything is written, because the
// partitions depend on every entity: edges are held as uint32 columns (12
// bytes per edge, 16 with weights; ordinals are recomputed from the list of
// bad lines), plus the dictionaries (per entity: the name in an arena
// block, 16 to 32 bytes of open-addressing hash table, 8 bytes of partition
// and offset); writing an edge set of several buckets adds, per edge of
// that file, its bucket number and a 16-byte row in bucket order.
//
// Speed. Lines are parsed with bytes functions, in blocks of 128 KiB of
// whole lines: a reader goroutine splits, checks and hashes them and reads
// the names' first 8 bytes (pass A), the calling goroutine then looks the
// names up in line order (pass B), touching the table slots of the lines
// ahead so that their cache misses overlap (see batch.go). Up to three
// blocks are in flight. After the first block the columns and the tables
// are reserved from the file size; on Linux, large tables are marked for
// huge pages (huge_linux.go). A Parquet file is decoded one row group per
// goroutine; with one pair of entity dictionaries the decoders also look
// their row groups' dictionary values up in them while pass B adds names
// (dict_shared.go), so that pass B mostly gives ids to new names and stores
// rows. The bucket sort runs on every core
// (write.go); bucket files are written through per-column buffers and
// fsynced together at commit.
//
// Invariants (tests cite them by number):
//
//  1. Round trip: every good edge appears exactly once, in the bucket of
//     its entities' partitions, with its relation, weight (float32, not
//     truncated), ordinal and entity names; inside a bucket edges keep file
//     order. Every bucket has a file, empty ones included.
//  2. Accounting: per file, lines = comment lines + edge lines, edge lines
//     = stored edges + skipped lines; skipped lines are reported by reason.
//  3. Atomic: on any error, cancellation or injected failure, the previous
//     store (or its absence) is left as it was (edgestore invariant 6).
//  4. Deterministic: the same config (seed) and files give the same
//     store, byte for byte.
//  5. Partitions follow PBG's contiguous ranges over a seeded uniform
//     shuffle pinned by this package (golden test).
//  6. An edge file named s3://BUCKET/KEY (OpenInput, Options.Objects)
//     gives the store the same bytes in a local file give: a Parquet
//     object is read with ranged GETs of its footer and column chunks, a
//     text one in one streaming GET.
package importer
