// Package pbg converts between batchprep and PyTorch-BigGraph's files:
// it writes a trained checkpoint in PBG's checkpoint layout (HDF5 files
// through internal/hdf5), with PBG's entity files beside it, and converts
// PBG's imported data (entity files and edges_{lhs}_{rhs}.h5 buckets) into
// a batchprep edge store once, so that training and planning keep one
// read path (the checksummed store); and it reads a PBG checkpoint as the
// initial values of a run (init_path).
// docs/formats-pbg.md has the mapping of files and datasets.
//
// Invariants (tests cite them by number):
//
//  1. WriteCheckpoint writes, for every entity type t and partition p of
//     the config, embeddings_{t}_{p}.v{N}.h5 with a float32 dataset
//     "embeddings" of shape (entities, dimension) holding the checkpoint's
//     rows in dictionary order, and the root attribute format_version = 1.
//  2. model.v{N}.h5 holds each relation's operator parameters under PBG's
//     public names ("model/relations/{id}/operator/{side}/{param}") with
//     PBG's shapes, and each global embedding under
//     "model/entities/{type}/global_embedding", each with the attribute
//     state_dict_key (PBG's private name); scoring with them gives
//     batchprep's scores.
//  3. checkpoint_version.txt is written last, after every other file is
//     complete and synced: a directory without it holds no checkpoint.
//  4. config.json holds only keys of PBG's config schema, and of the keys
//     not every PBG release knows only those set to other than their
//     default.
//  5. Import keeps PBG's entity partitions, offsets, names and relation
//     ids: every edge of bucket (l, r) of PBG's data is in bucket (l, r)
//     of the store with the same lhs, rhs and rel, in file order, its
//     weight as float32 (1 without a weight column). A missing bucket file
//     is an empty bucket; offsets outside their partition, relation ids
//     outside the config, featurized entities and counts that disagree
//     with the names are errors naming the file.
//  6. A PBG checkpoint as init_path (Init) gives a fresh run its
//     embeddings and its model parameters (every parameter of the
//     config's model, under PBG's names and shapes, and nothing else).
//     Rows are placed by entity name, never by position: the
//     checkpoint's names are PBG's entity_names_{t}_{p}.json under the
//     entity_path of its config.json (else beside the checkpoint), so a
//     store with other partitions or another order gets each entity's
//     own row. Every store entity must be named by the checkpoint unless
//     InitOptions.AllowUnmatched (then the others start at random); none
//     matching, or no names found, is refused. Rows of a checkpoint
//     partition without an embeddings file start at random.
//  7. A config whose entity_path and edge_paths hold PBG's imported data
//     (IsData) is read through a store converted from them into
//     MirrorDir (entity_path + ".batchprep"), never by writing into PBG's
//     directories. EnsureMirror reuses that store while PBG's files have
//     the names, sizes and modification times recorded at conversion and
//     the store the fingerprint it had, and converts again otherwise.
package pbg
