#!/usr/bin/env bash
# A corpus larger than this machine's memory: ATIS train concatenated COPIES
# times (default 9000: 27.3 GB, 44.8 M sequences), read by `batchprep read`
# with default flags, each run after the file's pages were dropped from the
# page cache (posix_fadvise DONTNEED through dd iflag=nocache; no root
# needed), next to the baselines of the same run: cat of the cold file (the
# disk), and the same reads of ATIS x150 (455 MB) from the page cache. Per
# run: wall seconds, MB/s, CPU seconds, peak RSS (VmHWM). Runs: the index
# pass cold (--cache-index, one minibatch), file and window order with the
# cached index (and with --memory-limit off), and the first minibatch at
# sweep 10^9 on both corpora. It writes the corpus on the fly and removes it.
#
#   bash bench/larger.sh                 # or: bash .ci/bench larger
#   COPIES=2000 ROUNDS=1 bash bench/larger.sh
#   BATCHPREP_BENCH_DIR=/big bash bench/larger.sh   # where the corpus goes (kept;
#                     # its cached indexes are removed at exit, so the next read
#                     # of a kept corpus begins with an index pass)
#
# Needs ../shared/data/ctf/atis/atis.train.ctf, /usr/bin/time, and free disk
# for the corpus and its index (about 1.03 x its size; checked first).
set -euo pipefail
cd "$(dirname "$0")/.."
COPIES=${COPIES:-9000}
ROUNDS=${ROUNDS:-2}
src=../shared/data/ctf/atis/atis.train.ctf
[ -f "$src" ] || { echo "larger: $src is missing" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "larger: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
dir=${BATCHPREP_BENCH_DIR:-}
keep=1
if [ -z "$dir" ]; then
  dir=$(mktemp -d -p "${TMPDIR:-/tmp}")
  keep=0
fi
mkdir -p "$dir"
cleanup() { if [ "$keep" = 0 ]; then rm -rf "$dir"; else rm -f "$dir"/*.batchprep-index; fi; }
trap cleanup EXIT
one=$(stat -c %s "$src")
need=$(( one * (COPIES + 150) * 103 / 100 ))
free=$(( $(df -P -B1 "$dir" | awk 'NR == 2 { print $4 }') ))
big=$dir/atis-x$COPIES.ctf
small=$dir/atis-x150.ctf
if [ ! -f "$big" ] && [ "$free" -lt "$need" ]; then
  echo "larger: $dir has $((free >> 30)) GiB free, the corpora need $((need >> 30)) GiB; set COPIES lower or BATCHPREP_BENCH_DIR" >&2
  exit 1
fi
mem=$(( $(awk '/MemTotal/ { print $2 }' /proc/meminfo) * 1024 ))
[ ! -f "$big" ] && for _ in $(seq "$COPIES"); do cat "$src"; done > "$big"
[ ! -f "$small" ] && for _ in $(seq 150); do cat "$src"; done > "$small"
size=$(stat -c %s "$big")
ssize=$(stat -c %s "$small")
[ "$size" -gt "$mem" ] || echo "larger: note: the corpus ($size bytes) is not larger than memory ($mem bytes)"
bin=$dir/batchprep
go build -o "$bin" ./cmd/batchprep
lines=$(wc -l < "$src")
streams=(--stream S0:943:sparse --stream S1:26:sparse --stream S2:129:sparse)
mkdir -p bench-out
out=bench-out/larger.txt
: > "$out"
drop() { dd if="$1" iflag=nocache count=0 status=none; }
run() { # label, bytes, then the command
  local label=$1 bytes=$2; shift 2
  local tf=$dir/time.txt
  /usr/bin/time -o "$tf" -f "%e %U %S %M" "$@" > /dev/null
  read -r wall user sys rss < "$tf"
  awk -v l="$label" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" -v b="$bytes" \
    'BEGIN { printf "%-24s wall %7.2f s  %6.0f MB/s  cpu %6.2f s  VmHWM %7.1f MiB\n", l, w, b/w/1e6, u+s, r/1024 }' | tee -a "$out"
}
read_args() { echo read "$1" "${streams[@]}" --mb 1024 --format summary --quiet --cache-index; }
# The baseline's index is cached before the rounds, so that no cached read
# of it counts an index pass (the corpus's own is built by index-cold).
# shellcheck disable=SC2046
"$bin" $(read_args "$small") --max-minibatches 1 > /dev/null
echo "== $(date -u +%FT%TZ) $(nproc) cores, $((mem >> 30)) GiB, load: $(cut -d' ' -f1-3 /proc/loadavg); corpus $size bytes ($COPIES copies), baseline $ssize bytes" | tee -a "$out"
for r in $(seq "$ROUNDS"); do
  drop "$big"
  run "cat-cold#$r" "$size" cat "$big"
  rm -f "$big.batchprep-index"
  drop "$big"
  # shellcheck disable=SC2046
  run "index-cold#$r" "$size" "$bin" $(read_args "$big") --max-minibatches 1
  for order in none window; do
    drop "$big"
    # shellcheck disable=SC2046
    run "$order-cold#$r" "$size" "$bin" $(read_args "$big") --randomize $order
    drop "$big"
    # shellcheck disable=SC2046
    run "$order-cold-limitoff#$r" "$size" "$bin" $(read_args "$big") --randomize $order --memory-limit off
    cat "$small" > /dev/null
    # shellcheck disable=SC2046
    run "$order-x150-cached#$r" "$ssize" "$bin" $(read_args "$small") --randomize $order
  done
  for f in "$big" "$small"; do
    n=$(( $(stat -c %s "$f") / one ))
    m=$(( lines * n ))
    # shellcheck disable=SC2046
    run "sweep1e9-$(basename "$f" .ctf)#$r" 0 "$bin" $(read_args "$f") --max-minibatches 1 --epochs 2000000000 --start $((1000000000 * m + m / 2))
  done
done
echo "larger: results in $out"
