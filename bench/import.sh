#!/usr/bin/env bash
# `batchprep import` of a generated power-law graph (bench/gengraph), this
# tree's binary next to a baseline commit's binary (default 874ec7b, the
# older importer), interleaved run by run so that both see the
# same machine load. Each run imports into its own store; after the first
# round the two stores must be byte-identical (the script stops otherwise).
# Per run: wall seconds, edges/s (wall), user+sys CPU seconds, edges per
# CPU-second and peak RSS (/usr/bin/time's maximum resident set). The input
# is read once before the runs (page cache); each import fsyncs its store.
#
#   bash bench/import.sh                       # 10 M edges, 1 M entities, P = 1 and 8, 3 rounds
#   BATCHPREP_SCALE=1 bash bench/import.sh     # LiveJournal size: 69 M edges, 4.8 M entities
#   ROUNDS=5 PARTS="1 4 16" BASELINE=main bash bench/import.sh
#   EDGES=2000000 ENTITIES=200000 ZIPF=1.0 bash bench/import.sh
#
# Needs /usr/bin/time (Debian package "time"). Work files go to
# $BATCHPREP_BENCH_DIR (kept) or a temporary directory (removed); about
# 40 bytes per edge. Results: bench-out/import.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
PARTS=${PARTS:-1 8}
BASELINE=${BASELINE:-874ec7b}
if [ "${BATCHPREP_SCALE:-}" = 1 ]; then
  EDGES=${EDGES:-69000000} ENTITIES=${ENTITIES:-4800000}
fi
EDGES=${EDGES:-10000000}
ENTITIES=${ENTITIES:-1000000}
ZIPF=${ZIPF:-0.8}
SEED=${SEED:-1}
[ -x /usr/bin/time ] || { echo "bench/import.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
dir=${BATCHPREP_BENCH_DIR:-}
if [ -z "$dir" ]; then
  dir=$(mktemp -d)
  trap 'rm -rf "$dir"' EXIT
fi
mkdir -p "$dir" bench-out
new=$dir/batchprep-new
base=$dir/batchprep-base
go build -o "$new" ./cmd/batchprep
src_dir=$(mktemp -d)
git archive "$BASELINE" | tar -x -C "$src_dir"
(cd "$src_dir" && go build -o "$base" ./cmd/batchprep)
rm -rf "$src_dir"

gen=(-entities "$ENTITIES" -edges "$EDGES" -relations 1 -zipf "$ZIPF" -seed "$SEED")
in=$dir/graph-$EDGES-$ENTITIES-$ZIPF-$SEED.tsv
if [ ! -s "$in" ]; then
  go run ./bench/gengraph "${gen[@]}" >"$in.tmp"
  mv "$in.tmp" "$in"
fi
cat "$in" >/dev/null # into the page cache

out=bench-out/import.txt
{
  echo "# bench/import.sh $(date -u +%Y-%m-%dT%H:%MZ) $(git rev-parse --short HEAD) vs $BASELINE"
  echo "# input: go run ./bench/gengraph ${gen[*]} ($(stat -c %s "$in") bytes)"
  echo "# command: batchprep import --quiet --config cfg.toml --rel-col 1 FILE"
  printf '%-5s %-4s %-5s %8s %12s %8s %14s %9s  %s\n' P bin round wall_s edges/s cpu_s edges/cpu-s rss_MiB load
} | tee "$out"
for P in $PARTS; do
  for v in base new; do
    mkdir -p "$dir/$v-$P"
    printf 'entity_path = "ent"\nedge_paths = ["edges"]\ncheckpoint_path = "ckpt"\n[entities.n]\nnum_partitions = %d\n[[relations]]\nname = "r0"\nlhs = "n"\nrhs = "n"\n' "$P" >"$dir/$v-$P/cfg.toml"
  done
  for round in $(seq "$ROUNDS"); do
    for v in base new; do
      bin=$base
      [ "$v" = new ] && bin=$new
      t=$dir/time.txt
      /usr/bin/time -f '%e %U %S %M' -o "$t" "$bin" import --quiet --config "$dir/$v-$P/cfg.toml" --rel-col 1 "$in"
      read -r wall user sys rss <"$t"
      load=$(cut -d' ' -f1 /proc/loadavg)
      awk -v P="$P" -v v="$v" -v r="$round" -v w="$wall" -v u="$user" -v s="$sys" -v m="$rss" -v e="$EDGES" -v l="$load" \
        'BEGIN { c = u + s; printf "%-5s %-4s %-5s %8.2f %12.0f %8.2f %14.0f %9.0f  %s\n", P, v, r, w, e / w, c, e / c, m / 1024, l }' | tee -a "$out"
    done
    if [ "$round" = 1 ] && ! diff -r "$dir/base-$P" "$dir/new-$P" >/dev/null; then
      # cfg.toml is the same in both; any difference is in the store.
      echo "bench/import.sh: P=$P: the stores of $BASELINE and this tree differ" >&2
      diff -rq "$dir/base-$P" "$dir/new-$P" >&2 || true
      exit 1
    fi
  done
done
