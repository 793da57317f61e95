// Package config loads PyTorch-BigGraph (PBG) configurations written in
// TOML, JSON or PBG's own Python form, with PBG's own key names, so that a
// PBG config dict (dumped with json.dumps, or returned by a .py file's
// get_torchbiggraph_config) loads unchanged.
//
// Invariants (tests cite them by number):
//
//  1. Every key of PBG's ConfigSchema is known (including training-only and
//     distributed keys such as dimension, comparator, num_machines,
//     hogwild_delay), plus batchprep's seed. Any other key, at any depth, is
//     an error naming the key. Keys that PBG allows to be None accept null.
//  2. Every error is an *Error naming the offending key in PBG's spelling
//     (relations[1].lhs, entities.user.num_partitions, bucket_order), or, for
//     a syntax error, the line and column; Load also names the file.
//  3. Absent keys take PBG's defaults (Defaults, pbg-notes §9); seed
//     defaults to 0. workers stays nil when absent and NumWorkers then
//     returns runtime.NumCPU().
//  4. BucketShape follows PBG: on each side, the partitioned entity types
//     (num_partitions > 1) of that side's relations share one partition
//     count, which is the side's count; a side with none has 1. Two
//     different counts on one side are a validation error.
//  5. The same configuration written in TOML and in JSON decodes to equal
//     Config values with equal Canonical encodings; Canonical is a
//     deterministic function of the Config value.
//  6. Load makes relative paths (entity_path, edge_paths, checkpoint_path,
//     init_path) relative to the directory of the config file, so a command
//     run from any directory finds the same store; Parse leaves them as
//     written (ResolvePaths does it for a caller with its own base).
//  7. checkpoint_path is needed only to train (ValidateTraining); import,
//     plan and verify accept a config without it.
//  8. Values that size what import, plan and train allocate or walk are
//     bounded (limits.go: partitions, buckets, edge chunks, workers,
//     epochs, dimension, batch size, negatives); a
//     value past its limit is an *Error naming the key, the value and the
//     limit, never an allocation.
//  9. edge_roles (ours) gives each edge path a role: train, valid or test.
//     Unset, every edge set is train (PBG trains on every edge path); set,
//     it has one known role per edge path and at least one train. Training
//     and plan walk the train edge sets only (TrainingEdgeSets); import
//     writes all of them with one entity dictionary. An unset edge_roles is
//     left out of Canonical, so older configs keep their fingerprints.
//  10. A key given twice in one JSON object is an error naming the key, its
//     line and column and those of the first one, as TOML's decoder refuses
//     it. An override (WithOverrides) that is not key=value, names no key
//     of the schema or leads nowhere unwraps to ErrBadOverride.
//  11. A .py config is PBG's Python form: LoadWith runs it (this runs the
//     file's code) with a Python interpreter, isolated (-I) and bounded by
//     a timeout, in a child process that only runs the file, calls its
//     get_torchbiggraph_config() and writes the dict as JSON; that JSON is
//     then read exactly as a .json config (same keys, validation and path
//     resolution), so a .py and a .json of one dict load equal. Its
//     failures are *Errors naming the file: the file's own traceback
//     (without the loader's frames), a missing or non-function
//     get_torchbiggraph_config, a result that is not a dict, a value JSON
//     cannot carry (named by its key), the timeout, a missing
//     interpreter. Only the .py extension runs code: another file that
//     defines get_torchbiggraph_config is refused.
//
// Validate checks what import and plan need; ValidateTraining adds what
// only training needs (dimension, batch_size a multiple of num_batch_negs).
package config
