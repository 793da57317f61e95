#!/usr/bin/env bash
# Installs the pinned DuckDB Node package (package-lock.json) into
# .ci/duckdb/node_modules when it is missing, and Debian's nodejs and npm
# when they are absent. Tests use it through internal/duckdbtest as an
# independent Parquet writer and reader. Safe to run again: it does nothing
# when everything is in place.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "installing Debian's nodejs and npm"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm) >/dev/null
fi
if [ ! -d node_modules/@duckdb/node-api ]; then
  echo "installing @duckdb/node-api (npm ci in .ci/duckdb)"
  npm ci --no-audit --no-fund --loglevel=error
fi
echo "duckdb harness: node $(node --version), $(node -e 'console.log(require("./node_modules/@duckdb/node-api/package.json").version)')"
