#!/usr/bin/env bash
# Tests of the Go library: go vet, unit tests, the coverage test and the
# contract scenario against a live service. With MATCHPOINT_BASE_URL unset,
# the repository's contract test (clients/contract_test.go) starts a service
# from this checkout on a free port with a fresh database, makes the
# credentials, and runs this script again against it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v go >/dev/null || { echo "go is not installed"; exit 77; }
if [ -z "${MATCHPOINT_BASE_URL:-}" ]; then
  cd "$here/../.."
  exec go test -count=1 -v ./clients/contract/go/
fi
cd "$here"
gofmt_out=$(gofmt -l .)
[ -z "$gofmt_out" ] || { echo "gofmt would change: $gofmt_out" >&2; exit 1; }
go vet ./...
# With the race detector when cgo can build it: the OAuth refresh is shared
# by concurrent calls.
race=""
if [ "$(go env CGO_ENABLED)" = 1 ] && command -v gcc >/dev/null; then race=-race; fi
go test -count=1 $race -v ./...
