#!/usr/bin/env bash
# Rebuilds passwords.txt.gz, the list of common and breached passwords that
# sign-up refuses (ASVS 2.1.7), from the npm package @zxcvbn-ts/language-common
# (MIT; its licence is LICENSE.txt here). The package is maintained and ranks
# about 49,000 passwords seen most often in breaches. The list is kept whole,
# in rank order, folded to lower case and without duplicates: the service
# reads only the entries its length rule lets through, so a change of that
# rule needs no rebuild.
#
# Usage: internal/users/commonpasswords/rebuild.sh [VERSION]   (needs npm, node, gzip)
set -euo pipefail
version="${1:-4.1.3}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
npm pack --silent "@zxcvbn-ts/language-common@$version" >/dev/null
tar xzf zxcvbn-ts-language-common-"$version".tgz
node -e '
const list = require("./package/src/passwords.json");
const seen = new Set();
for (const p of list) {
  const k = p.toLowerCase();
  if (k === "" || k.includes("\n") || seen.has(k)) continue;
  seen.add(k);
  process.stdout.write(k + "\n");
}' > passwords.txt
gzip -9 -n -c passwords.txt > "$here/passwords.txt.gz"
cp package/LICENSE.txt "$here/LICENSE.txt"
echo "@zxcvbn-ts/language-common@$version" > "$here/SOURCE"
echo "$(wc -l < passwords.txt) passwords from @zxcvbn-ts/language-common@$version"
