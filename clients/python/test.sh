#!/usr/bin/env bash
# Tests of the Python library: it installs with pip from this folder into a
# fresh virtual environment (standard library only), then the unit tests,
# the coverage test and the contract scenario run against a live service.
# With MATCHPOINT_BASE_URL unset, the repository's contract test
# (clients/contract_test.go) starts a service from this checkout on a free
# port with a fresh database, makes the credentials, and runs this script
# again against it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=$(command -v python3 || true)
[ -n "$py" ] || { echo "python3 is not installed"; exit 77; }
if [ -z "${MATCHPOINT_BASE_URL:-}" ]; then
  command -v go >/dev/null || { echo "go is needed to start a service"; exit 77; }
  cd "$here/../.."
  exec go test -count=1 -v ./clients/contract/python/
fi
# The package and its tests are Python 3.9 syntax (the oldest supported).
"$py" - "$here" <<'PY'
import ast, pathlib, sys
files = [p for d in ("matchpoint", "tests", "_build") for p in pathlib.Path(sys.argv[1], d).rglob("*.py")]
for f in files:
    ast.parse(f.read_text(encoding="utf-8"), str(f), feature_version=(3, 9))
print(f"python 3.9 syntax: {len(files)} files")
PY
venv=$(mktemp -d)
trap 'rm -rf "$venv"' EXIT
"$py" -m venv "$venv"
# No index: the package and its build backend need nothing but the
# standard library.
"$venv/bin/pip" install --quiet --no-index "$here"
# From outside the source folder, so the installed package is the one tested.
cd "$venv"
"$venv/bin/python" - <<'PY'
# Importing the package loads nothing but the standard library.
import sys
before = set(sys.modules)
import matchpoint
if hasattr(sys, "stdlib_module_names"):  # Python 3.10+
    extra = sorted(m for m in set(sys.modules) - before
                   if m.split(".")[0] not in sys.stdlib_module_names and m.split(".")[0] != "matchpoint")
    assert not extra, f"importing matchpoint loaded {extra}"
print("installed", matchpoint.__version__, matchpoint.__file__)
PY
cp -r "$here/tests" "$venv/tests"
"$venv/bin/python" -m unittest discover -v -s tests -t .
