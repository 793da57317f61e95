#!/usr/bin/env bash
# Benchmarks of internal/kern at the trainer's shapes, with Debian's OpenBLAS
# sgemm (single thread) at the same shapes in the same run, interleaved
# round by round so that both see the same load. Not part of CI.
#
#   bash bench/kern.sh            # COUNT=6 rounds
#   COUNT=3 bash bench/kern.sh
#
# Needs libopenblas-dev for the OpenBLAS rows (apt-get install
# libopenblas-dev); without it only the Go rows are measured. The Go build
# never links OpenBLAS: the C program lives here and is compiled by this
# script only. Results: bench-out/kern.txt (raw) and bench-out/kern.stat.
set -euo pipefail
cd "$(dirname "$0")/.."
COUNT=${COUNT:-6}
BENCHTIME=${BENCHTIME:-0.5s}
BENCHSTAT=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
mkdir -p bench-out
out=bench-out/kern.txt
: >"$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
blas=""
if [ -f /usr/include/x86_64-linux-gnu/cblas.h ] || [ -f /usr/include/cblas.h ]; then
  cc -O2 -o "$tmp/sgemm" bench/openblas/sgemm.c -lopenblas && blas="$tmp/sgemm"
else
  echo "libopenblas-dev is not installed: OpenBLAS rows skipped" >&2
fi
go test -c -o "$tmp/kern.test" ./internal/kern
for round in $(seq "$COUNT"); do
  echo "== round $round of $COUNT ($(uptime | sed 's/.*load/load/'))" >&2
  "$tmp/kern.test" -test.run '^$' -test.bench 'Gemm|DotAxpy|Softmax' -test.benchtime "$BENCHTIME" | tee -a "$out"
  [ -n "$blas" ] && OPENBLAS_NUM_THREADS=1 "$blas" 1 | tee -a "$out"
done
go run "$BENCHSTAT" -col /impl "$out" >bench-out/kern.stat 2>&1 ||
  go run "$BENCHSTAT" "$out" >bench-out/kern.stat 2>&1 || true
cat bench-out/kern.stat
