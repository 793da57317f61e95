// Package file opens a sequence corpus file whatever its format (CNTK
// Text Format or Parquet) behind one interface, and converts a corpus from
// one format to the other. Callers that read corpora (the read, inspect and
// convert commands, the server) open files here and see only a Reader.
//
// Invariants (tests cite them by number):
//
//  1. The format is the file's: Parquet when the file starts with PAR1 or
//     its name ends in .parquet, CTF otherwise.
//  2. ToParquet then reading the Parquet file gives the same layout
//     (with the same chunking options), ids and stream data as the source,
//     so the same minibatches; ToCTF then reading the CTF file does too,
//     when the ids are digits (other ids are replaced by row numbers).
//  3. Both conversions write to a temporary file beside the output, fsync
//     it and rename it into place: a failed conversion leaves no output.
//  4. A corpus named s3://BUCKET/KEY is read from object storage
//     (internal/objstore) with the same readers, so it gives the layout,
//     fingerprint and minibatches of the same bytes in a local file: a
//     state saved reading one resumes reading the other. Its format is told
//     by the name's extension or the object's first bytes.
//  5. PublishIndex puts an object's index beside it (KEY.batchprep-index):
//     a CTF object's index, a Parquet object's counts. A reader with no
//     index in its cache fetches the published one instead of reading the
//     object through an index pass, and uses it only when it was made for
//     the same version of the object and the same reader settings;
//     otherwise it says so (a ctf.ErrCache warning) and indexes.
package file
