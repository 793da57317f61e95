#!/usr/bin/env bash
# Regenerates the idle-time table of docs/distributed.md: FB15k-237's
# training edges imported with P = 4, 8, 16 partitions, then
# `batchprep plan --trainers W --simulate` for W = 2, 4, 8, every bucket
# order under batchprep's policy, and PBG's lock-server policy (which does
# not consult the bucket order). Two epochs, one edge chunk; a bucket
# takes as long as it has edges. Deterministic: the output never changes
# for the same data.
#
#   bash docs/distributed-table.sh [EDGE_LIST]   (default ../shared/data/kg/fb15k-237/train.txt)
set -euo pipefail
data=${1:-../shared/data/kg/fb15k-237/train.txt}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/batchprep" ./cmd/batchprep
bp=$tmp/batchprep
orders="random affinity inside_out outside_in"
idle() { # config trainers policy -> idle percent
	"$bp" plan --config "$1" --trainers "$2" --simulate --policy "$3" --format jsonl |
		sed -n 's/.*"idle_fraction":\([0-9.]*\).*/\1/p' | awk '{printf "%.1f%%", 100*$1}'
}
echo "| P | W | random | affinity | inside_out | outside_in | PBG lock server |"
echo "|---|---|---|---|---|---|---|"
for P in 4 8 16; do
	for order in $orders; do
		cat >"$tmp/p$P-$order.toml" <<CFG
entity_path = "$tmp/p$P/ent"
edge_paths = ["$tmp/p$P/edges"]
checkpoint_path = "$tmp/ckpt"
num_epochs = 2
num_edge_chunks = 1
workers = 1
eval_fraction = 0
bucket_order = "$order"
[entities.e]
num_partitions = $P
[[relations]]
name = "r"
lhs = "e"
rhs = "e"
CFG
	done
	"$bp" import --config "$tmp/p$P-random.toml" --lhs-col 0 --rhs-col 2 "$data" >/dev/null 2>&1
	for W in 2 4 8; do
		row="| $P | $W |"
		for order in $orders; do
			row="$row $(idle "$tmp/p$P-$order.toml" "$W" batchprep) |"
		done
		row="$row $(idle "$tmp/p$P-random.toml" "$W" pbg) |"
		echo "$row"
	done
done
