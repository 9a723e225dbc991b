#!/usr/bin/env bash
# Checks of the Swift package. No Swift compiler is available to this
# project's CI, so nothing here compiles or runs Swift: the check parses
# every Swift file with tree-sitter-swift (npm) and fails on a syntax error,
# and a coverage check fails when an operation of the served OpenAPI
# document has no method. With MATCHPOINT_BASE_URL unset, the repository's
# contract test (clients/contract_test.go) starts a service from this
# checkout and runs this script again against it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
for tool in node npm python3; do
  command -v "$tool" >/dev/null || { echo "$tool is not installed"; exit 77; }
done
if [ -z "${MATCHPOINT_BASE_URL:-}" ]; then
  command -v go >/dev/null || { echo "go is needed to start a service"; exit 77; }
  cd "$here/../.."
  exec go test -count=1 -v ./clients/contract/swift/
fi

python3 "$here/scripts/coverage.py"

# tree-sitter's native binding is built once (node-gyp) and kept in a cache
# outside the repository. Install scripts are skipped: tree-sitter-swift
# ships prebuilt parsers, and its CLI's script would download a binary.
cache="${XDG_CACHE_HOME:-$HOME/.cache}/matchpoint/swift-syntax-ts0.25.0-swift0.7.1"
if ! NODE_PATH="$cache/node_modules" node -e 'require("tree-sitter"); require("tree-sitter-swift")' 2>/dev/null; then
  rm -rf "$cache" && mkdir -p "$cache"
  echo '{"private": true}' > "$cache/package.json"
  (cd "$cache" && npm install --silent --no-audit --no-fund --ignore-scripts --legacy-peer-deps tree-sitter@0.25.0 tree-sitter-swift@0.7.1 \
    && npm rebuild --silent tree-sitter)
fi
NODE_PATH="$cache/node_modules" node "$here/scripts/syntax.js" "$here"
