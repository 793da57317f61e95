package config

// keyDoc documents one key for docs/config.md: which group it belongs to
// and what it does. Defaults are not written here: Reference takes them
// from Defaults, so the two cannot disagree.
type keyDoc struct {
	group string
	help  string
}

// Groups of keys, in the order docs/config.md lists them.
var keyGroups = []struct{ name, intro string }{
	{"store", "Where the graph lives. Relative paths are relative to the directory of the config file."},
	{"plan", "What `plan` (and a trainer) walks: epochs, edge chunks, buckets, workers, batches."},
	{"training", "Read, validated and kept so that a PBG config loads unchanged; only training uses them."},
	{"distributed", "PBG's distributed and I/O keys: read and validated; batch preparation on one machine does not use them."},
	{"resources", "batchprep's: what a training run may use, checked before it starts (docs/training.md, \"Memory\")."},
}

// topDocs documents every top-level key (a test checks that it covers
// topKeys exactly).
var topDocs = map[string]keyDoc{
	"entities":                         {"store", "Entity types: a table per type (keys below). Every edge's lhs and rhs belong to a type, by its relation."},
	"relations":                        {"store", "Relation types, a list of tables (keys below); a relation's id is its index in the list."},
	"entity_path":                      {"store", "Directory of the entity dictionaries (`entity_count_T_P.txt`, `entity_names_T_P.json`) and the entity manifest. Other files there are never touched."},
	"edge_paths":                       {"store", "One directory per edge set: `import`'s i-th input file becomes `edge_paths[i]`, replaced whole; all of them share one entity dictionary. `edge_roles` says which are trained on."},
	"edge_roles":                       {"store", "batchprep's: the role of each edge set, in `edge_paths` order: `train` (trained on), `valid` or `test` (imported with the same entity dictionary, never trained on; `eval --edge-set NAME` ranks them). Unset: every edge set is `train`, as in PBG."},
	"checkpoint_path":                  {"store", "Where training saves the model. Needed only to train; `import`, `plan` and `verify` do not use it."},
	"init_path":                        {"store", "A PyTorch-BigGraph checkpoint directory to start training from (unset: random initialization); see [formats-pbg.md](formats-pbg.md)."},
	"checkpoint_preservation_interval": {"training", "Keep every N-th epoch's checkpoint (unset: only the last)."},
	"num_epochs":                       {"plan", "Passes over every training edge set (`edge_roles`)."},
	"num_edge_chunks":                  {"plan", "Chunks each bucket is cut into (unset: the fewest that keep every chunk within `max_edges_per_chunk`)."},
	"max_edges_per_chunk":              {"plan", "Largest edge count of a chunk of a bucket, when `num_edge_chunks` is unset."},
	"bucket_order":                     {"plan", "Order of the buckets in a pass: `random`, `affinity`, `inside_out`, `outside_in` or `buffer` (for a buffer of `partition_buffer` partitions; docs/bucket-orders.md)."},
	"workers":                          {"plan", "Hogwild workers a bucket's edges are split among (unset: the number of CPUs; the shares depend on it, so set it to reproduce a plan elsewhere)."},
	"batch_size":                       {"plan", "Edges per batch."},
	"eval_fraction":                    {"plan", "Fraction of each bucket's edges held out for evaluation, in [0, 1)."},
	"dynamic_relations":                {"plan", "Relation ids come from the data (import's relation column) instead of `relations`; needs exactly one relation, which gives the entity types of every edge."},
	"seed":                             {"plan", "batchprep's seed: partitions at import, holdout, shuffles and bucket orders are derived from it. Changing it needs a new import."},

	"dimension":             {"training", "Embedding dimension; required to train."},
	"init_scale":            {"training", "Scale of the random initial embeddings."},
	"global_emb":            {"training", "Learn a global embedding per entity type."},
	"comparator":            {"training", "`dot`, `cos`, `l2` or `squared_l2`."},
	"bias":                  {"training", "Use the first embedding coordinate as a bias."},
	"loss_fn":               {"training", "`ranking`, `logistic` or `softmax`."},
	"margin":                {"training", "Margin of the ranking loss."},
	"regularization_coef":   {"training", "Regularization weight."},
	"regularizer":           {"training", "`N3`."},
	"max_norm":              {"training", "Largest embedding norm (unset: no limit)."},
	"lr":                    {"training", "Learning rate."},
	"relation_lr":           {"training", "Learning rate of the relation operators (unset: `lr`)."},
	"num_batch_negs":        {"training", "Negatives sampled from the batch; `batch_size` must be a multiple."},
	"num_uniform_negs":      {"training", "Negatives sampled uniformly."},
	"disable_lhs_negs":      {"training", "No negatives on the lhs side."},
	"disable_rhs_negs":      {"training", "No negatives on the rhs side (not with `disable_lhs_negs`)."},
	"eval_num_batch_negs":   {"training", "Batch negatives in evaluation (unset: as in training)."},
	"eval_num_uniform_negs": {"training", "Uniform negatives in evaluation (unset: as in training)."},
	"early_stopping":        {"training", "Stop when evaluation stops improving."},
	"hogwild_delay":         {"training", "Seconds the first bucket's workers start apart (PBG)."},
	"half_precision":        {"training", "fp16 embeddings (GPU only in PBG)."},

	"num_machines":                            {"distributed", "Machines training together."},
	"num_partition_servers":                   {"distributed", "-1: trainers host the partitions; 0: swap through a shared disk; N: N servers."},
	"distributed_init_method":                 {"distributed", "torch.distributed init URL; required when `num_machines` > 1."},
	"distributed_tree_init_order":             {"distributed", "Initialize the process group in tree order."},
	"num_groups_for_partition_server":         {"distributed", "Process groups for the partition server."},
	"num_groups_per_sharded_partition_server": {"distributed", "Groups per sharded partition server."},
	"partition_shard_size":                    {"distributed", "Shard size of a partition, in MiB."},
	"num_gpus":                                {"distributed", "GPUs to train on (0: CPU)."},
	"background_io":                           {"distributed", "Deprecated in PBG."},
	"verbose":                                 {"distributed", "PBG's log verbosity."},

	"checkpoint_buckets": {"resources", "Buckets a single-process `train` trains between two checkpoint commits (unset or 0: the largest `num_partitions` x `partition_buffer`/2, waiting for the next partition load; 1: every bucket). Epoch ends, the run's end and Ctrl-C also commit; a partition leaving memory is always written. Training does not depend on it; distributed ranks commit every bucket. docs/training.md, \"Checkpoints\"."},
	"partition_buffer":   {"resources", "Partitions of each entity type a training run holds at once, at least 2 (unset: 2, PBG's; with a memory budget, the largest that fits, printed by `train`). A bucket trains when both its partitions are resident; the one leaving is the one used furthest ahead. `bucket_order = \"buffer\"` orders buckets for it. docs/training.md, \"The partition buffer\"."},
	"degree_exponent":    {"training", "batchprep's, with `negatives = \"buffer_degree\"`: degree negatives draw each entity with probability proportional to its degree to this power: 0.25, 0.5, 0.75 or 1 (unset: 0.25). docs/training.md, \"The partition buffer\"."},
	"interleave_buckets": {"training", "batchprep's: train the consecutive buckets of the order whose partitions the buffer holds at once together, their batches interleaved in a seeded order, instead of one after the other (PBG's). A checkpoint due inside a group commits at its end. Not with `--etcd` (unset: false). docs/training.md, \"Interleaved buckets\"."},
	"negatives":          {"training", "batchprep's: where negatives come from: `bucket` (the bucket's own partitions, PBG's), `buffer` (uniform negatives from every resident partition of the type, by size) or `buffer_degree` (as `buffer`, with `num_batch_negs` draws per chunk by a power of degree, `degree_exponent`, for the batch negatives; partitions weighted by the inverse of their time in the buffer) (unset: `bucket`)."},
	"memory_limit":       {"resources", "Memory a training run may use, as a size: `2GiB`, `512MiB`, `1.5GB`, or bytes (unset: the machine's memory). `train` predicts its peak from the config and the store and refuses a run that does not fit, naming the smallest `num_partitions` that would; the Go heap is held under it while training. `train --memory-limit` overrides it."},
}

// entityDocs and relationDocs document the keys of one entities.T table and
// one relations[i] table.
var entityDocs = map[string]string{
	"num_partitions": "Partitions of the type (1: unpartitioned). The partitioned types on one side of the relations share one count, which is that side's bucket count.",
	"featurized":     "Featurized entities (PBG); refused by import.",
	"dimension":      "Embedding dimension of this type (unset: the top-level `dimension`).",
}

var relationDocs = map[string]string{
	"name":     "Relation name, as written in import's relation column.",
	"lhs":      "Entity type of the edge's lhs.",
	"rhs":      "Entity type of the edge's rhs.",
	"weight":   "Loss weight of the relation's edges (> 0).",
	"operator": "`none`, `diagonal`, `translation`, `linear`, `affine` or `complex_diagonal`.",
	"all_negs": "Use every entity as a negative (PBG).",
}
