#!/usr/bin/env bash
# a graph larger than its memory budget. Generates
# graph/gen's power-law graph (bench/gengraph), imports it into P
# partitions, prints `plan --simulate`'s prediction under the budget, trains
# one epoch with `train --memory-limit`, and checks what the run did against
# what was predicted: peak RSS (/usr/bin/time's maximum resident set) within
# the budget, and the epoch's partition bytes read and written equal to the
# prediction. Exits 1 when either fails.
#
#   BATCHPREP_BUDGET=1 bash bench/budget.sh    # 20 M entities, 100 M edges, P = 16, 2 GiB
#                                              # (about an hour on 2 cores; ~125 GB of disk traffic)
#   ENTITIES=200000 EDGES=1000000 PARTS=4 LIMIT=160MiB bash bench/budget.sh  # a quick check
#   BATCHPREP_BUDGET=1 ORDER=buffer bash bench/budget.sh   # the buffer order (c: what fits)
#
# BASELINE=1 (the default with BATCHPREP_BUDGET=1) first measures the rate
# the run is compared with, in the same run: one epoch of the 1 M-entity,
# 10 M-edge graph at P = 1 with the same settings (BenchmarkTrainScaleIO),
# and prints the ratio of the two edges/s at the end.
#
# Settings are the FB15k-237 ones of the scale benchmarks (d = 100, ComplEx,
# softmax, 1000 uniform and 50 batch negatives, 2 workers). Work files go to
# $BATCHPREP_BENCH_DIR (kept) or a temporary directory (removed): about 20
# bytes per edge of TSV, 15 of store, and twice the checkpoint. Results:
# bench-out/budget.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${BATCHPREP_BUDGET:-}" = 1 ]; then
  ENTITIES=${ENTITIES:-20000000} EDGES=${EDGES:-100000000} PARTS=${PARTS:-16} LIMIT=${LIMIT:-2GiB}
elif [ -z "${ENTITIES:-}" ]; then
  echo "bench/budget.sh: set BATCHPREP_BUDGET=1 for the 20 M-entity run, or ENTITIES, EDGES, PARTS and LIMIT" >&2
  exit 2
fi
EDGES=${EDGES:?} PARTS=${PARTS:-16} LIMIT=${LIMIT:-2GiB} NEGS=${NEGS:-1000} ORDER=${ORDER:-inside_out}
BASELINE=${BASELINE:-${BATCHPREP_BUDGET:-0}}
base_rate=
if [ "$BASELINE" = 1 ]; then
  echo "== the baseline: 1 M entities, 10 M edges, P = 1 (BenchmarkTrainScaleIO)"
  base_rate=$(BATCHPREP_SCALE=1 BATCHPREP_SCALE_DEFAULTS_ONLY=1 BATCHPREP_SCALE_PARTITIONS=1 \
    go test ./graph/train -run '^$' -bench TrainScaleIO -benchtime 1x -timeout 1h |
    tee /dev/stderr | awk '/io=overlap/ { for (i = 1; i < NF; i++) if ($(i+1) == "edges/s") print $i }')
fi
[ -x /usr/bin/time ] || { echo "bench/budget.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
dir=${BATCHPREP_BENCH_DIR:-}
if [ -z "$dir" ]; then
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir" bench-out
out=$PWD/bench-out/budget.txt
go build -o "$dir/batchprep" ./cmd/batchprep
go build -o "$dir/gengraph" ./bench/gengraph
cd "$dir"
cat > graph.toml <<TOML
entity_path = "entities"
edge_paths = ["edges"]
checkpoint_path = "ckpt"
dimension = 100
num_epochs = 1
batch_size = 1000
num_batch_negs = 50
num_uniform_negs = $NEGS
comparator = "dot"
loss_fn = "softmax"
lr = 0.1
regularization_coef = 1e-3
global_emb = false
eval_fraction = 0
workers = 2
bucket_order = "$ORDER"
[entities.all]
num_partitions = $PARTS
[[relations]]
name = "r0"
lhs = "all"
rhs = "all"
operator = "complex_diagonal"
TOML
{
  echo "# $(date -u +%FT%TZ) $(git -C "$OLDPWD" rev-parse --short HEAD 2>/dev/null): $ENTITIES entities, $EDGES edges, P = $PARTS, --memory-limit $LIMIT, $NEGS uniform negatives, bucket_order $ORDER"
  ./gengraph -entities "$ENTITIES" -edges "$EDGES" -relations 1 -seed 1 > edges.tsv
  rm -rf entities edges ckpt
  ./batchprep import --quiet --config graph.toml --rel-col 1 edges.tsv
  ./batchprep plan --config graph.toml --simulate --memory-limit "$LIMIT" 2>&1 | tee plan.txt
  /usr/bin/time -f "peak %M KiB, %e s" ./batchprep train --config graph.toml --memory-limit "$LIMIT" 2>&1 |
    grep -v '^train: [0-9.]*% \|^train: epoch' | tee train.txt
} | tee "$out"
limit=$(./batchprep plan --config graph.toml --simulate --memory-limit "$LIMIT" 2>&1 | sed -n 's/.*of \([0-9.]*\) \([KMG]i\)B (--memory-limit).*/\1 \2/p')
peak=$(sed -n 's/^peak \([0-9]*\) KiB.*/\1/p' train.txt)
predicted=$(grep '^epoch 1 disk:' plan.txt)
measured=$(grep '^epoch 1 disk:' train.txt)
budget_kib=$(awk -v v="${limit% *}" -v u="${limit#* }" 'BEGIN { m = (u == "Ki") ? 1 : (u == "Mi") ? 1024 : 1048576; printf "%d", v * m }')
status=0
if [ "$peak" -le "$budget_kib" ]; then
  echo "peak RSS $((peak / 1024)) MiB within the budget of $((budget_kib / 1024)) MiB" | tee -a "$out"
else
  echo "FAIL: peak RSS $((peak / 1024)) MiB over the budget of $((budget_kib / 1024)) MiB" | tee -a "$out"
  status=1
fi
if [ "$predicted" = "$measured" ]; then
  echo "disk bytes as predicted: ${measured#epoch 1 disk: }" | tee -a "$out"
else
  printf 'FAIL: disk bytes differ\n  predicted: %s\n  measured:  %s\n' "$predicted" "$measured" | tee -a "$out"
  status=1
fi
if [ -n "$base_rate" ]; then
  secs=$(sed -n 's/^peak [0-9]* KiB, \([0-9.]*\) s$/\1/p' train.txt)
  awk -v e="$EDGES" -v s="$secs" -v b="$base_rate" 'BEGIN { printf "edges/s %.0f, %.2fx the same run'"'"'s 1 M-entity rate of %.0f (whole process, import excluded)\n", e / s, e / s / b, b }' | tee -a "$out"
fi
exit $status
