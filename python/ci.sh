#!/usr/bin/env bash
# Checks that the Python package installs as python/README.md says: offline,
# with Debian's pip and setuptools, into a venv made with
# --system-site-packages (Debian's grpcio, protobuf, numpy and torch), and
# that the installed package, run outside the source tree, finds the
# batchprep binary on PATH, reads a corpus, ships py.typed, and says how to
# get the binary when there is none. Usage: bash python/ci.sh BATCHPREP_BINARY
set -euo pipefail
bin=$(realpath "${1:?usage: bash python/ci.sh BATCHPREP_BINARY}")
cd "$(dirname "$0")"
need=""
for p in python3-venv python3-pip python3-setuptools python3-grpcio python3-protobuf python3-numpy python3-torch; do
  dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
if [ -n "$need" ]; then
  echo "installing:$need"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need) >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src="$work/src"
cp -r . "$src"  # build from a copy: setuptools leaves build/ and *.egg-info behind
rm -rf "$src/build" "$src"/*.egg-info
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install --quiet --no-index --no-build-isolation "$src"
mkdir -p "$work/path" "$work/run"
ln -s "$bin" "$work/path/batchprep"
printf '1 |x 1\n2 |x 2\n3 |x 3\n' > "$work/run/c.ctf"
cd "$work/run"
env -u BATCHPREP_BIN PATH="$work/path:/usr/bin:/bin" "$work/venv/bin/python" - <<'PY'
import os, subprocess, sys
import batchprep, batchprep.torch
here = os.path.dirname(batchprep.__file__)
assert "site-packages" in here, here
assert os.path.exists(os.path.join(here, "py.typed")), "py.typed not installed"
mbs = list(batchprep.read("c.ctf", streams=["x:1"], mb="2", randomize="none"))
assert [mb.sequences.tolist() for mb in mbs] == [[0, 1], [2]], mbs
ds = batchprep.torch.SequenceDataset("c.ctf", ["x:1"], rank=0, workers=1, mb="3")
assert [len(mb.sequences) for mb in ds] == [3]
os.environ["PATH"] = "/usr/bin:/bin"
try:
    batchprep.read("c.ctf", streams=["x:1"])
    sys.exit("no error without a binary")
except FileNotFoundError as e:
    assert "go install ./cmd/batchprep" in str(e), e
print("python package: installed in a venv and used outside the source tree: ok")
PY
