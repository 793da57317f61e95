#!/usr/bin/env bash
# Regenerates the Go and Python code of batchprep.proto. With an argument,
# writes into that directory instead (the CI staleness check diffs it).
# Installs protoc (Debian's protobuf-compiler 3.21.12, which matches Debian's
# python3-protobuf) and the Go plugins at pinned versions when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.}
GEN_GO_VERSION=v1.36.12     # google.golang.org/protobuf, as go.mod
GEN_GRPC_VERSION=v1.5.1     # protoc-gen-go-grpc; its code needs grpc >= 1.64
if ! command -v protoc >/dev/null 2>&1; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq protobuf-compiler) >/dev/null
fi
bin=$(go env GOPATH)/bin
want_go="protoc-gen-go $GEN_GO_VERSION"
if [ "$("$bin/protoc-gen-go" --version 2>/dev/null)" != "$want_go" ]; then
  GOTOOLCHAIN=local go install "google.golang.org/protobuf/cmd/protoc-gen-go@$GEN_GO_VERSION"
fi
if [ "$("$bin/protoc-gen-go-grpc" --version 2>/dev/null)" != "protoc-gen-go-grpc ${GEN_GRPC_VERSION#v}" ]; then
  GOTOOLCHAIN=local go install "google.golang.org/grpc/cmd/protoc-gen-go-grpc@$GEN_GRPC_VERSION"
fi
mkdir -p "$out/proto/batchpreppb" "$out/python/batchprep"
PATH="$bin:$PATH" protoc -I proto \
  --go_out="$out/proto/batchpreppb" --go_opt=paths=source_relative \
  --go-grpc_out="$out/proto/batchpreppb" --go-grpc_opt=paths=source_relative \
  --python_out="$out/python/batchprep" \
  proto/batchprep.proto
