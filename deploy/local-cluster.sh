#!/usr/bin/env bash
# A Matchpoint cluster on this machine: 3 "matchpoint serve" nodes on
# loopback ports over one PostgreSQL database and one Redis, behind nginx
# (round robin) on 127.0.0.1:8080.
#
#   deploy/local-cluster.sh up       build, start (or restart) everything
#   deploy/local-cluster.sh status   what runs and what answers
#   deploy/local-cluster.sh down     stop the nodes (SIGTERM: in-flight requests
#                                    finish, leases go back), nginx and Redis
#
# Settings (environment):
#   MATCHPOINT_CLUSTER_DIR   state, logs and pid files  (default /tmp/matchpoint-cluster)
#   MATCHPOINT_CLUSTER_NODES number of nodes            (default 3)
#   MATCHPOINT_CLUSTER_PORT  nginx's port               (default 8080; nodes on the next ones)
#   MATCHPOINT_DATABASE_URL  PostgreSQL                 (default postgres://postgres@127.0.0.1:5432/matchpoint_cluster?sslmode=disable,
#                                                        created when missing)
#   MATCHPOINT_REDIS_URL     Redis                      (default: a redis-server of the cluster's own on port 6390)
# nginx and redis-server are installed from Debian's packages when missing
# (as root). Any other MATCHPOINT_* variable is passed to the nodes.
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=${MATCHPOINT_CLUSTER_DIR:-/tmp/matchpoint-cluster}
NODES=${MATCHPOINT_CLUSTER_NODES:-3}
PORT=${MATCHPOINT_CLUSTER_PORT:-8080}
DB_URL=${MATCHPOINT_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/matchpoint_cluster?sslmode=disable}
REDIS_PORT=6390
REDIS_URL=${MATCHPOINT_REDIS_URL:-redis://127.0.0.1:$REDIS_PORT/0}
export PATH="$PATH:/usr/local/go/bin"

say() { printf '%s\n' "$*" >&2; }

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

need() { # need COMMAND DEBIAN-PACKAGE
  command -v "$1" >/dev/null && return
  [ "$(id -u)" = 0 ] || { say "$1 is not installed: apt-get install $2"; exit 1; }
  say "installing $2 from Debian's packages"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null
  # The package may start a system-wide instance; this cluster runs its own.
  if [ "$2" = nginx ]; then service nginx stop >/dev/null 2>&1 || true; fi
}

postgres_up() {
  local hostport
  hostport=$(sed -E 's#^[a-z]+://([^@/]*@)?([^/?]+).*#\2#' <<<"$DB_URL")
  local host=${hostport%:*} port=${hostport##*:}
  [ "$port" = "$hostport" ] && port=5432
  if ! pg_isready -h "$host" -p "$port" -q 2>/dev/null; then
    if command -v pg_ctlcluster >/dev/null && [ "$host" = 127.0.0.1 ]; then
      ver=$(ls /etc/postgresql | sort -V | tail -n 1)
      pg_ctlcluster --skip-systemctl-redirect "$ver" main start || true
      for _ in $(seq 1 30); do pg_isready -h "$host" -p "$port" -q && break; sleep 1; done
    fi
  fi
  pg_isready -h "$host" -p "$port" -q || { say "PostgreSQL at $host:$port does not answer"; exit 1; }
  # Create the database when missing (the nodes create the schema).
  local db admin
  db=$(sed -E 's#^[^/]*//[^/]*/([^?]*).*#\1#' <<<"$DB_URL")
  admin=$(sed -E "s#/$db([?]|\$)#/postgres\\1#" <<<"$DB_URL")
  if [ "$(psql "$admin" -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'")" != 1 ]; then
    psql "$admin" -qc "CREATE DATABASE \"$db\"" && say "created database $db"
  fi
}

redis_up() {
  [ -n "${MATCHPOINT_REDIS_URL:-}" ] && return # someone else's Redis
  need redis-server redis-server
  alive "$DIR/redis.pid" && return
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --daemonize yes --pidfile "$DIR/redis.pid" \
    --logfile "$DIR/redis.log" --dir "$DIR" --save '' --appendonly no
  for _ in $(seq 1 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
}

nginx_conf() {
  mkdir -p "$DIR/nginx"
  {
    echo "worker_processes 1;"
    echo "pid $DIR/nginx.pid;"
    echo "error_log $DIR/nginx-error.log warn;"
    echo "events { worker_connections 1024; }"
    echo "http {"
    echo "  access_log $DIR/nginx-access.log;"
    echo "  client_body_temp_path $DIR/nginx/body; proxy_temp_path $DIR/nginx/proxy;"
    echo "  fastcgi_temp_path $DIR/nginx/fastcgi; uwsgi_temp_path $DIR/nginx/uwsgi; scgi_temp_path $DIR/nginx/scgi;"
    echo "  upstream matchpoint {"
    for i in $(seq 1 "$NODES"); do echo "    server 127.0.0.1:$((PORT + i)) max_fails=1 fail_timeout=5s;"; done
    echo "    keepalive 32;"
    echo "  }"
    echo "  server {"
    echo "    listen 127.0.0.1:$PORT;"
    echo "    location / {"
    echo "      proxy_pass http://matchpoint;"
    echo "      proxy_http_version 1.1;"
    echo "      proxy_set_header Connection \"\";"
    echo "      proxy_set_header Host \$http_host;"
    echo "      proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;"
    echo "      proxy_set_header X-Forwarded-Proto \$scheme;"
    # A node that refuses the connection is skipped; requests that may have
    # reached a node (POST, PATCH) are not sent twice: that is the default.
    echo "      proxy_next_upstream error timeout http_502 http_503;"
    # Server-sent event streams (webhook streams, the real-time stream).
    echo "      proxy_buffering off; proxy_read_timeout 1h;"
    echo "    }"
    echo "  }"
    echo "}"
  } >"$DIR/nginx.conf"
}

up() {
  mkdir -p "$DIR"
  need nginx nginx
  postgres_up
  redis_up
  say "building matchpoint"
  go build -o "$DIR/matchpoint" ./cmd/matchpoint
  for i in $(seq 1 "$NODES"); do
    alive "$DIR/node-$i.pid" && { kill "$(cat "$DIR/node-$i.pid")"; while alive "$DIR/node-$i.pid"; do sleep 0.2; done; }
    # Started together: they migrate concurrently, one of them does the work.
    MATCHPOINT_ADDR=127.0.0.1:$((PORT + i)) MATCHPOINT_BASE_URL=${MATCHPOINT_BASE_URL:-http://127.0.0.1:$PORT} \
      MATCHPOINT_DATABASE_URL=$DB_URL MATCHPOINT_REDIS_URL=$REDIS_URL MATCHPOINT_TRUSTED_PROXIES=127.0.0.1 \
      MATCHPOINT_LOG_FORMAT=json nohup "$DIR/matchpoint" serve >>"$DIR/node-$i.log" 2>&1 &
    echo $! >"$DIR/node-$i.pid"
  done
  for i in $(seq 1 "$NODES"); do
    for _ in $(seq 1 150); do
      curl -fsS "http://127.0.0.1:$((PORT + i))/readyz" >/dev/null 2>&1 && break
      alive "$DIR/node-$i.pid" || { say "node $i exited:"; tail -n 20 "$DIR/node-$i.log" >&2; exit 1; }
      sleep 0.2
    done
  done
  nginx_conf
  if alive "$DIR/nginx.pid"; then
    nginx -p "$DIR" -c "$DIR/nginx.conf" -s reload
  else
    nginx -p "$DIR" -c "$DIR/nginx.conf"
  fi
  for _ in $(seq 1 50); do curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
  status
  say "up: http://127.0.0.1:$PORT (logs in $DIR)"
}

down() {
  for i in $(seq 1 "$NODES"); do
    if alive "$DIR/node-$i.pid"; then
      kill -TERM "$(cat "$DIR/node-$i.pid")"
    fi
  done
  for i in $(seq 1 "$NODES"); do
    for _ in $(seq 1 200); do alive "$DIR/node-$i.pid" || break; sleep 0.2; done
    rm -f "$DIR/node-$i.pid"
  done
  if alive "$DIR/nginx.pid"; then nginx -p "$DIR" -c "$DIR/nginx.conf" -s quit; fi
  if [ -z "${MATCHPOINT_REDIS_URL:-}" ] && alive "$DIR/redis.pid"; then
    redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || kill "$(cat "$DIR/redis.pid")"
  fi
  say "down"
}

status() {
  local bad=0
  row() { printf '%-8s %-22s %-8s %s\n' "$@"; }
  row WHAT ADDRESS PROCESS ANSWER
  for i in $(seq 1 "$NODES"); do
    local p=down a=-
    alive "$DIR/node-$i.pid" && p=$(cat "$DIR/node-$i.pid")
    a=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$((PORT + i))/readyz" 2>/dev/null || true)
    [ "$a" = 200 ] || bad=1
    row "node-$i" "127.0.0.1:$((PORT + i))" "$p" "readyz $a"
  done
  local p=down
  alive "$DIR/nginx.pid" && p=$(cat "$DIR/nginx.pid")
  local a
  a=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/readyz" 2>/dev/null || true)
  [ "$a" = 200 ] || bad=1
  row nginx "127.0.0.1:$PORT" "$p" "readyz $a"
  local r
  r=$(redis-cli -u "$REDIS_URL" ping 2>/dev/null || echo down)
  row redis "${REDIS_URL#redis://}" "-" "$r"
  return $bad
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) say "usage: $0 up|down|status"; exit 2 ;;
esac
