#!/usr/bin/env bash
# Runs the JavaScript client's tests: unit tests, the npm pack install test,
# and the contract scenario and operation coverage against a live server.
# With MATCHPOINT_BASE_URL set, that server is used with the credentials of
# the environment (see DECISIONS.md, "Client libraries against a given
# server"); otherwise this script builds the service from this checkout and
# starts it on a free port with a fresh SQLite database and its own CA.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$here"

if [ ! -x node_modules/.bin/tsc ]; then
  npm ci --no-audit --no-fund
fi
node scripts/build.mjs

tmp=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

json() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[process.argv[1]]))' "$1"; }

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
  port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
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
  owner=$(mp create-user --email "partner@example.com" --username partner --password "$password" --first-name Grace | json id)
  mp set-tier --user "$owner" --tier enterprise >/dev/null
  export MATCHPOINT_API_KEY=$(mp create-api-key --user "$owner" --name "js client tests" \
    --scopes "read write profile matching events admin" | json key)
  mp create-user --email "person@example.com" --username person --password "$password" --first-name Ada >/dev/null
  client=$(mp create-client --name "JS client tests" --redirect-uri "https://app.example/callback" \
    --scopes "read write profile matching events")
  export MATCHPOINT_CLIENT_ID=$(echo "$client" | json client_id)
  export MATCHPOINT_CLIENT_SECRET=$(echo "$client" | json client_secret)
  export MATCHPOINT_REDIRECT_URI="https://app.example/callback"
  export MATCHPOINT_USER_LOGIN=person MATCHPOINT_USER_PASSWORD="$password"
  export MATCHPOINT_TEST_TLS_CERT="$tmp/cert.pem" MATCHPOINT_TEST_TLS_KEY="$tmp/key.pem"
fi

node --test --test-concurrency=1 test/*.test.mjs
