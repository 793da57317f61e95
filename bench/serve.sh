#!/usr/bin/env bash
# The serve benchmarks of docs/performance-serve.md, in one run on the same
# data: ATIS replicated to >= 400 MB (BATCHPREP_BENCH_DIR keeps it), window
# randomizer, minibatches of 256 samples.
#   1. batchprep read --format summary            (the target's baseline)
#   2. the Python client into numpy, one process over loopback
#   3. bench/ctf_dataloader.py: plain Python CTF parser, DataLoader, 2 workers
#   4. first minibatch after connecting at sweep 10^9 (index warm)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${BATCHPREP_BENCH_DIR:-$(mktemp -d)}
atis=../shared/data/ctf/atis/atis.train.ctf
big=$dir/atis-x135.ctf
if [ ! -s "$big" ]; then
  for i in $(seq 135); do cat "$atis"; done > "$big.tmp" && mv "$big.tmp" "$big"
fi
ls -l "$big"
bin=$dir/batchprep
go build -o "$bin" ./cmd/batchprep
streams=(--stream S0:943:sparse --stream S1:26:sparse --stream S2:129:sparse)
pystreams=(--stream S0:943:sparse --stream S1:26:sparse --stream S2:129:sparse)
echo "== 1. batchprep read --format summary"
"$bin" read "$big" "${streams[@]}" --mb 256 --quiet --format summary 2>/dev/null
echo "== 2. Python client into numpy, one process, loopback"
"$bin" serve --listen 127.0.0.1:0 --metrics-listen off --stop-on-stdin-eof < <(sleep 100000) > "$dir/serve.out" &
srv=$!
trap 'kill $srv 2>/dev/null || true' EXIT
for _ in $(seq 50); do grep -q listening "$dir/serve.out" 2>/dev/null && break; sleep 0.1; done
addr=$(awk '/^listening/{print $2}' "$dir/serve.out")
/usr/bin/python3 bench/client_throughput.py "$big" "${pystreams[@]}" --mb 256 --address "$addr"
echo "== 3. plain Python CTF parser, DataLoader with 2 workers (bench/ctf_dataloader.py)"
/usr/bin/python3 bench/ctf_dataloader.py "$big" --stream S0 --stream S1 --stream S2 --mb 256 --workers 2 \
  --max-samples "${BASELINE_SAMPLES:-3000000}"
echo "== 4. first minibatch at sweep 10^9, index warm (the server indexed the file in 2.)"
M=$((66547 * 135)) # samples of ATIS train x 135
/usr/bin/python3 bench/client_throughput.py "$big" "${pystreams[@]}" --mb 256 --address "$addr" \
  --first-at-sweep 1000000000 --sweep-samples "${M:-0}"
