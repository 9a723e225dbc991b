#!/usr/bin/env bash
# Builds the Kotlin client with kotlinc and runs its JUnit 5 tests: unit
# tests, and the contract scenario and operation coverage against a live
# server. With MATCHPOINT_BASE_URL set, that server is used with the
# credentials of the environment (see DECISIONS.md, "Client libraries against
# a given server"); otherwise this script builds the service from this
# checkout and starts it on a free port with a fresh SQLite database and its
# own CA. Needs Debian's kotlin, junit5 and libandroid-json-java (installed
# here when missing).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$here"

java_lib=/usr/share/java
if ! command -v kotlinc >/dev/null || [ ! -f "$java_lib/junit-platform-console-standalone.jar" ] || [ ! -f "$java_lib/com.android.json.jar" ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get install -y --no-install-recommends kotlin junit5 libandroid-json-java >/dev/null
fi
json_jar="$java_lib/com.android.json.jar"
stdlib="$java_lib/kotlin-stdlib.jar"

tmp=$(mktemp -d)
server_pid=
cleanup() {
  status=$?
  if [ "$status" != 0 ] && [ -f "$tmp/server.log" ]; then echo "--- server log:" >&2; tail -40 "$tmp/server.log" >&2; fi
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

# The library (Kotlin 1.3, JVM 1.8 bytecode, as Android takes it), then the tests.
# kotlinc is slow: build/ (ignored by git) is rebuilt only when a source is newer.
mkdir -p build
if [ ! -f build/matchpoint.jar ] || [ -n "$(find src/main -newer build/matchpoint.jar -name '*.kt')" ]; then
  rm -rf build/matchpoint.jar build/tests
  kotlinc -nowarn -jvm-target 1.8 -cp "$json_jar" src/main/kotlin -d build/matchpoint.jar 2>&1 | grep -v -e '^OpenJDK.*warning' || true
  [ -f build/matchpoint.jar ] || { echo "compile failed" >&2; exit 1; }
fi
test_cp="build/matchpoint.jar:$json_jar:$java_lib/junit-jupiter-api.jar:$java_lib/apiguardian-api.jar:$java_lib/opentest4j.jar:$java_lib/junit-platform-commons.jar"
if [ ! -f build/tests/.built ] || [ -n "$(find src/test -newer build/tests/.built -name '*.kt')" ]; then
  rm -rf build/tests
  kotlinc -nowarn -jvm-target 1.8 -cp "$test_cp" src/test/kotlin -d build/tests 2>&1 | grep -v -e '^OpenJDK.*warning' || true
  [ -d build/tests/io ] || { echo "test compile failed" >&2; exit 1; }
  touch build/tests/.built
fi

field() { grep -o "\"$1\": *\"[^\"]*\"" | head -1 | sed 's/.*: *"\(.*\)"/\1/'; }

if [ -z "${MATCHPOINT_BASE_URL:-}" ]; then
  (cd "$repo" && go build -o "$tmp/matchpoint" ./cmd/matchpoint)
  # A CA the server trusts for webhooks, and a certificate for the receiver.
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tmp/ca.key" -out "$tmp/ca.pem" \
    -days 2 -subj "/CN=Matchpoint test CA" -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,digitalSignature" 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$tmp/key.pem" -out "$tmp/cert.csr" \
    -subj "/CN=127.0.0.1" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature\n' > "$tmp/ext"
  openssl x509 -req -in "$tmp/cert.csr" -CA "$tmp/ca.pem" -CAkey "$tmp/ca.key" -CAcreateserial -days 2 \
    -extfile "$tmp/ext" -out "$tmp/cert.pem" 2>/dev/null
  port=
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 30000))
    if ! (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
  done
  export MATCHPOINT_DATABASE_URL="sqlite:$tmp/matchpoint.db"
  MATCHPOINT_WEBHOOK_ALLOW_PRIVATE=true MATCHPOINT_WEBHOOK_CA_FILE="$tmp/ca.pem" MATCHPOINT_WEBHOOK_RETRY_SCHEDULE=1s,1s,2s \
    MATCHPOINT_LOG_LEVEL=warn "$tmp/matchpoint" serve --addr "127.0.0.1:$port" >"$tmp/server.log" 2>&1 &
  server_pid=$!
  export MATCHPOINT_BASE_URL="http://127.0.0.1:$port"
  for _ in $(seq 1 100); do
    curl -fs "$MATCHPOINT_BASE_URL/openapi.json" >/dev/null 2>&1 && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$tmp/server.log"; exit 1; }
    sleep 0.1
  done
  mp() { "$tmp/matchpoint" admin "$@"; }
  password="correct horse battery staple"
  owner=$(mp create-user --email "partner@example.com" --username partner --password "$password" --first-name Grace | field id)
  mp set-tier --user "$owner" --tier enterprise >/dev/null
  export MATCHPOINT_API_KEY=$(mp create-api-key --user "$owner" --name "kotlin client tests" \
    --scopes "read write profile matching events admin" | field key)
  mp create-user --email "person@example.com" --username person --password "$password" --first-name Ada >/dev/null
  client=$(mp create-client --name "Kotlin client tests" --redirect-uri "https://app.example/callback" \
    --scopes "read write profile matching events")
  export MATCHPOINT_CLIENT_ID=$(echo "$client" | field client_id)
  export MATCHPOINT_CLIENT_SECRET=$(echo "$client" | field client_secret)
  export MATCHPOINT_REDIRECT_URI="https://app.example/callback"
  export MATCHPOINT_USER_LOGIN=person MATCHPOINT_USER_PASSWORD="$password"
  export MATCHPOINT_TEST_TLS_CERT="$tmp/cert.pem" MATCHPOINT_TEST_TLS_KEY="$tmp/key.pem"
fi

java -jar "$java_lib/junit-platform-console-standalone.jar" \
  -cp "build/tests:build/matchpoint.jar:$json_jar:$stdlib" \
  --select-package io.matchpoint --disable-banner --details=tree --fail-if-no-tests
