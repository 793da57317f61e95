#!/usr/bin/env bash
# FB15k-237 under partitioning: valid MRR of examples/fb15k237-complex.toml
# (PBG's FB15k settings, d = 100, 5 epochs) at P = 1 and at P = 4 and 8 with
# PBG's rules (two partitions resident, inside_out, negatives from the
# bucket) and with a partition buffer (bucket_order = "buffer", negatives =
# "buffer"). Each setting is imported and trained with config seeds 1..RUNS; the
# script prints one line per run and a mean per setting.
#
#   bash bench/fbparts.sh                          # every setting below, 3 runs each
#   SETTINGS="1/-/2/bucket 8/buffer/8/buffer" RUNS=1 bash bench/fbparts.sh
#
# A setting is P/order/c/negatives[/interleave] ("-": the config's order;
# "interleave": interleave_buckets = true). SET="KEY=VALUE ..." adds train
# settings to every setting (e.g. SET="degree_exponent=1"). Work files go to
# $BATCHPREP_BENCH_DIR (kept) or a temporary directory (removed), about 1 GB
# at a time. MRR does not depend on the machine's load. Results:
# bench-out/fbparts.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
data=$PWD/../shared/data/kg/fb15k-237
[ -f "$data/train.txt" ] || { echo "bench/fbparts.sh: $data is missing" >&2; exit 1; }
SETTINGS=${SETTINGS:-"1/-/2/bucket 4/inside_out/2/bucket 4/buffer/4/buffer 8/inside_out/2/bucket 8/buffer/4/buffer 8/buffer/8/buffer"}
RUNS=${RUNS:-3}
dir=${BATCHPREP_BENCH_DIR:-}
if [ -z "$dir" ]; then
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir" bench-out
out=$PWD/bench-out/fbparts.txt
: > "$out"
go build -o "$dir/batchprep" ./cmd/batchprep
bp=$dir/batchprep
sed -e "s#\.\./work/fb15k237/#$dir/store/#g" examples/fb15k237-complex.toml > "$dir/base.toml"
for s in $SETTINGS; do
  IFS=/ read -r p order c negs inter <<< "$s"
  cfg=$dir/p$p.toml
  sed -e "s#$dir/store/#$dir/p$p/#g" -e "s/num_partitions = 1/num_partitions = $p/" "$dir/base.toml" > "$cfg"
  sets=(--set "partition_buffer=$c" --set "negatives=\"$negs\"")
  [ "$order" = - ] || sets+=(--set "bucket_order=\"$order\"")
  [ "${inter:-}" != interleave ] || sets+=(--set "interleave_buckets=true")
  for kv in ${SET:-}; do sets+=(--set "$kv"); done
  sum=0
  for r in $(seq 1 "$RUNS"); do
    ck=$dir/p$p/ck-$r
    rm -rf "$dir/p$p"
    "$bp" import --config "$cfg" --set "seed=$r" --rel-col 1 "$data"/{train,valid,test}.txt > /dev/null 2>&1
    "$bp" train --config "$cfg" "${sets[@]}" --set "checkpoint_path=\"$ck\"" --set "seed=$r" > "$dir/train.log" 2>&1 || { cat "$dir/train.log" >&2; exit 1; }
    mrr=$("$bp" eval --config "$cfg" "${sets[@]}" --set "checkpoint_path=\"$ck\"" --set "seed=$r" --edge-set valid --format json |
      /usr/bin/python3 -c 'import json,sys; print("%.4f" % json.load(sys.stdin)["mrr"])')
    echo "P=$p order=$order c=$c negatives=$negs ${inter:-} run=$r valid_mrr=$mrr" | tee -a "$out"
    sum=$(/usr/bin/python3 -c "print($sum + $mrr)")
  done
  rm -rf "$dir/p$p"
  echo "P=$p order=$order c=$c negatives=$negs ${inter:-} mean_valid_mrr=$(/usr/bin/python3 -c "print('%.4f' % ($sum / $RUNS))")" | tee -a "$out"
done
