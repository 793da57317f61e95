#!/usr/bin/env bash
# The serve benchmarks of docs/performance-serve.md, in one run on the same
# data: ATIS train replicated 135 times (391 MiB; BATCHPREP_BENCH_DIR keeps
# it), window randomizer (read's default), minibatches of 256 samples, the
# page cache warm (the file is read once before the timed runs).
#   0. first minibatch after connecting at sweep 10^9: cold (the server
#      indexes the file in this call) once, then warm (index cached) REPS
#      times; the same with --chunk-bytes 16384
#   then REPS rounds, interleaved, each of:
#   1. batchprep read --format summary            (the baseline)
#   2. the Python client into numpy, one process over loopback
#   3. bench/ctf_dataloader.py: plain Python CTF parser, DataLoader, 2 workers
#      (on its first BASELINE_SAMPLES samples: it is ~100x slower)
# Each line is one measurement; the summary prints medians and ratios.
#   bash bench/serve.sh            REPS=5 BASELINE_SAMPLES=1000000
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${REPS:-5}
dir=${BATCHPREP_BENCH_DIR:-$(mktemp -d)}
atis=../shared/data/ctf/atis/atis.train.ctf
big=$dir/atis-x135.ctf
if [ ! -s "$big" ]; then
  for _ in $(seq 135); do cat "$atis"; done > "$big.tmp" && mv "$big.tmp" "$big"
fi
cat "$big" > /dev/null # page cache warm
bin=$dir/batchprep
go build -o "$bin" ./cmd/batchprep
log=$dir/serve-bench.log
: > "$log"
echo "file $(stat -c %s "$big") bytes; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$log"
streams=(--stream S0:943:sparse --stream S1:26:sparse --stream S2:129:sparse)

"$bin" serve --listen 127.0.0.1:0 --metrics-listen off < /dev/null > "$dir/serve.out" &
srv=$!
trap 'kill $srv 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q listening "$dir/serve.out" 2>/dev/null && break; sleep 0.1; done
addr=$(awk '/^listening/{print $2}' "$dir/serve.out")
cpu() { awk '{print ($14 + $15) / 100}' "/proc/$srv/stat"; }

sweep=$((66547 * 135)) # samples of ATIS train x 135 (read's "samples:")
echo "== 0. first minibatch at sweep 10^9 (start $((sweep * 1000000000)))"
/usr/bin/python3 bench/client_throughput.py "$big" "${streams[@]}" --mb 256 --address "$addr" \
  --first-at-sweep 1000000000 --sweep-samples "$sweep" --repeat 1 | sed 's/^/cold: /' | tee -a "$log"
/usr/bin/python3 bench/client_throughput.py "$big" "${streams[@]}" --mb 256 --address "$addr" \
  --first-at-sweep 1000000000 --sweep-samples "$sweep" --repeat "$reps" | sed 's/^/warm: /' | tee -a "$log"
# 16 KiB chunks: a new index (reader settings differ), then warm
for n in 1 "$reps"; do
  /usr/bin/python3 bench/client_throughput.py "$big" "${streams[@]}" --mb 256 --address "$addr" \
    --first-at-sweep 1000000000 --sweep-samples "$sweep" --repeat "$n" --chunk-bytes 16384 |
    sed "s/^/$([ "$n" = 1 ] && echo cold || echo warm), --chunk-bytes 16384: /" | tee -a "$log"
done

for rep in $(seq "$reps"); do
  echo "== round $rep (load average $(cut -d' ' -f1-3 /proc/loadavg))" | tee -a "$log"
  out=$(/usr/bin/time -f "cpu %U %S" "$bin" read "$big" "${streams[@]}" --mb 256 --quiet --format summary 2>&1)
  echo "read samples/s $(awk '/^samples\/s:/{print $2}' <<<"$out") cpu $(awk '/^cpu/{print $2 + $3}' <<<"$out")" | tee -a "$log"
  c0=$(cpu)
  out=$(/usr/bin/python3 bench/client_throughput.py "$big" "${streams[@]}" --mb 256 --address "$addr")
  c1=$(cpu)
  echo "client samples/s $(awk '/^samples\/s:/{print $2}' <<<"$out") cpu $(awk '/^client cpu/{print $4}' <<<"$out") server-cpu $(awk -v a="$c0" -v b="$c1" 'BEGIN{print b - a}')" | tee -a "$log"
  out=$(/usr/bin/time -f "cpu %U %S" /usr/bin/python3 bench/ctf_dataloader.py "$big" --stream S0 --stream S1 --stream S2 \
    --mb 256 --workers 2 --max-samples "${BASELINE_SAMPLES:-1000000}" 2>&1)
  echo "dataloader samples/s $(awk '/^samples\/s:/{print $2}' <<<"$out") cpu $(awk '/^cpu/{print $2 + $3}' <<<"$out") samples $(awk '/^samples:/{print $2}' <<<"$out")" | tee -a "$log"
done

echo "== summary (medians over $reps rounds; ratios per round, then their median)"
awk '
  function median(a, n,   b, i, j, t) { for (i = 1; i <= n; i++) b[i] = a[i]  # sorts a copy
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
    return n % 2 ? b[(n + 1) / 2] : (b[n / 2] + b[n / 2 + 1]) / 2 }
  /^read /       { r[++nr] = $3; rc[nr] = $5 }
  /^client /     { c[++nc] = $3; cc[nc] = $5; sc[nc] = $7 }
  /^dataloader / { d[++nd] = $3; dc[nd] = $5; ds[nd] = $7 }
  END {
    for (i = 1; i <= nr; i++) { q1[i] = c[i] / r[i]; q2[i] = c[i] / d[i]
      # samples per CPU second (all processes: client + server; DataLoader workers included)
      pr[i] = M / rc[i]; pc[i] = M / (cc[i] + sc[i]); pd[i] = ds[i] / dc[i]; q3[i] = pc[i] / pr[i]; q4[i] = pc[i] / pd[i] }
    printf "read --format summary  %.0f samples/s (cpu %.2f s)\n", median(r, nr), median(rc, nr)
    printf "Python client          %.0f samples/s (client cpu %.2f s, server cpu %.2f s)\n", median(c, nc), median(cc, nc), median(sc, nc)
    printf "DataLoader, 2 workers  %.0f samples/s\n", median(d, nd)
    printf "client / read          %.2f (rounds:", median(q1, nr); for (i = 1; i <= nr; i++) printf " %.2f", q1[i]; print ")"
    printf "client / DataLoader    %.1f (rounds:", median(q2, nr); for (i = 1; i <= nr; i++) printf " %.1f", q2[i]; print ")"
    printf "per CPU second: read %.0f, client+server %.0f, DataLoader %.0f samples\n", median(pr, nr), median(pc, nr), median(pd, nr)
    printf "per CPU second: client+server / read %.2f, client+server / DataLoader %.1f\n", median(q3, nr), median(q4, nr)
  }' M="$sweep" "$log" | tee -a "$log"
