// Package edgestore is batchprep's on-disk graph format: entity
// dictionaries laid out as PyTorch-BigGraph lays them out, and one file of
// fixed-size little-endian columns per bucket, with checksummed manifests.
// The full format is documented in docs/formats-graph.md.
//
// An entity_path directory holds entity_count_{type}_{part}.txt,
// entity_names_{type}_{part}.json, dynamic_rel_names.json,
// dynamic_rel_count.txt (dynamic relations only) and
// batchprep-entities.json (the entity manifest). Each edge_paths[i]
// directory holds edges_{lhs}_{rhs}.bin for every bucket and manifest.json.
//
// Invariants (tests cite them by number):
//
//  1. Versioned: bucket headers and manifests carry format version 1;
//     readers refuse any other version and any unknown manifest field.
//  2. Every bucket (lhs, rhs) of the L x R shape has a file, empty buckets
//     included. Its columns are lhs u32, rhs u32, rel u32, [weight f32],
//     ordinal u64, each contiguous, in that order, after a 64-byte header.
//  3. Checksummed: every file is checked (size, header, CRC32C per column or
//     per file) before its data is used; a mismatch is an *Error naming the
//     file that matches ErrCorrupt. A bucket file's size and header are
//     checked when it is first opened (NumEdges or ReadEdges), its column
//     checksums before the first ReadEdges returns any of its edges: over
//     the bytes that read fetched when it reads the whole bucket, otherwise
//     by one pass over the file first. A failed ReadEdges leaves dst as it
//     was.
//  4. ReadEdges(s, b, begin, end) returns exactly the edges written to the
//     bucket at positions [begin, end), in write order, with one ReadAt per
//     column straight into dst's columns (no intermediate buffer and no
//     parsing on little-endian hosts; a portable decoder elsewhere).
//  5. Fingerprint is a hash of the manifests, which hold every file's
//     checksum, so it changes whenever any stored byte changes.
//  6. Atomic: a Writer stages everything beside its targets; Commit moves
//     the entity files into entity_path one by one (manifest last; other
//     files there are never touched) and swaps each edge set directory
//     whole. An error (or a Hook failure) at any step undoes every move and
//     leaves the old store intact. After a crash, Open finds the old store,
//     the new one, or an error saying the import was interrupted (no
//     manifest, or edge sets and entities from different imports); it never
//     reads a mix.
//  7. Directories are created 0755 and files 0644 (less the umask), staging
//     directories included, so a store written by one user can be planned
//     from by another.
//  8. A killed Writer may leave hidden .NAME.batchprep-tmp-* and
//     .NAME.batchprep-old-* directories beside a target NAME. They are never
//     read; Leftovers lists them (verify reports them) and the next
//     successful Commit removes those that existed when its Create ran.
//     One import at a time per store: a second, concurrent import may see
//     the first one's staging directories as leftovers.
package edgestore
