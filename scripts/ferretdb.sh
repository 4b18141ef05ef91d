#!/usr/bin/env bash
# A loopback FerretDB 1.24.2 (a MongoDB-wire server) for the MongoDB halves of the tests.
#
#   scripts/ferretdb.sh build          build the binary into the cache folder unless it is there; print its path
#   scripts/ferretdb.sh start PORT DIR start one on 127.0.0.1:PORT with its data in DIR; print its pid once it answers
#   scripts/ferretdb.sh start-postgresql PORT DIR
#                                      the same on a PostgreSQL of its own (Debian's, run as the `postgres`
#                                      user on PORT+1, its cluster in DIR/pg), as the deployment guide
#                                      recommends; print FerretDB's pid. Stop it with kill PID, then
#                                      PostgreSQL with `scripts/ferretdb.sh stop-postgresql DIR`.
#
# Sourced by .ci/run; handy locally too:
#   pid=$(scripts/ferretdb.sh start 27017 /tmp/ferretdb) && MONGODB_URI=mongodb://127.0.0.1:27017/ npm test; kill $pid
set -euo pipefail

VERSION=v1.24.2
CACHE="${FERRETDB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/prospecta/ferretdb-${VERSION#v}}"
BIN="$CACHE/ferretdb"

build() {
  if [ -x "$BIN" ] && "$BIN" --version >/dev/null 2>&1; then echo "$BIN"; return; fi
  command -v go >/dev/null 2>&1 || { echo "ferretdb: Go is needed to build FerretDB $VERSION" >&2; exit 1; }
  echo "ferretdb: building FerretDB $VERSION into $CACHE (a few minutes, once)" >&2
  # Not `go install …/cmd/ferretdb@$VERSION`: built that way, the binary panics at start, because the
  # module as published lacks build/version/version.txt (its release builds generate it). So the
  # module's source is copied, the file written, and the command built from the copy.
  local dir src
  dir=$(go mod download -json "github.com/FerretDB/FerretDB@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { echo "ferretdb: go mod download found no source for $VERSION" >&2; exit 1; }
  src=$(mktemp -d)
  cp -r "$dir"/. "$src"
  chmod -R u+w "$src"
  echo "$VERSION" >"$src/build/version/version.txt"
  mkdir -p "$CACHE"
  (cd "$src" && go build -trimpath -buildvcs=false -o "$BIN.partial" ./cmd/ferretdb)
  rm -rf "$src"
  mv "$BIN.partial" "$BIN"
  echo "$BIN"
}

# Runs FerretDB BIN on 127.0.0.1:PORT (state and log in DIR) with the backend's flags; prints its pid once it answers.
serve() {
  local bin="$1" port="$2" dir="$3" pid
  shift 3
  "$bin" "$@" --state-dir="$dir/state" \
    --listen-addr="127.0.0.1:$port" --telemetry=disable --debug-addr=- --log-level=error \
    >"$dir/ferretdb.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$pid"; return; fi
    kill -0 "$pid" 2>/dev/null || { echo "ferretdb: exited at start; see $dir/ferretdb.log" >&2; cat "$dir/ferretdb.log" >&2; exit 1; }
    sleep 0.1
  done
  kill "$pid"
  echo "ferretdb: no answer on 127.0.0.1:$port within 10 s; see $dir/ferretdb.log" >&2
  exit 1
}

start() {
  local port="$1" dir="$2" bin
  bin=$(build)
  mkdir -p "$dir/data" "$dir/state"
  # SQLite rather than PostgreSQL: FerretDB's handler (where its gaps are: see server/store/ferretdb.ts)
  # is the same on both, and SQLite needs no second server, no package and no non-root user (CI runs
  # as root, which PostgreSQL refuses). One SQLite file per database, so each test's throwaway
  # database is a file of its own. PostgreSQL is what the deployment guide recommends for production.
  serve "$bin" "$port" "$dir" --handler=sqlite --sqlite-url="file:$dir/data/"
}

# PostgreSQL refuses to run as root, so its cluster belongs to `postgres` (Debian's package makes that user).
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1; }

start_postgresql() {
  local port="$1" dir="$2" pg bin
  pg=$(pg_bin)
  [ -n "$pg" ] || { echo "ferretdb: no PostgreSQL under /usr/lib/postgresql (apt-get install postgresql)" >&2; exit 1; }
  bin=$(build)
  mkdir -p "$dir/state"
  if [ ! -d "$dir/pg" ]; then
    install -d -o postgres "$dir/pg"
    su postgres -c "$pg/initdb -D '$dir/pg/data' -A trust -U postgres" >"$dir/initdb.log" 2>&1
  fi
  su postgres -c "$pg/pg_ctl -D '$dir/pg/data' -l '$dir/pg/postgresql.log' -w -o '-p $((port + 1)) -k $dir/pg -c listen_addresses=127.0.0.1' start" >/dev/null
  su postgres -c "$pg/psql -h 127.0.0.1 -p $((port + 1)) -tAc \"select 1 from pg_database where datname='ferretdb'\"" | grep -q 1 ||
    su postgres -c "$pg/psql -h 127.0.0.1 -p $((port + 1)) -qc 'create database ferretdb'"
  serve "$bin" "$port" "$dir" --handler=postgresql --postgresql-url="postgres://postgres@127.0.0.1:$((port + 1))/ferretdb"
}

stop_postgresql() {
  local dir="$1"
  su postgres -c "$(pg_bin)/pg_ctl -D '$dir/pg/data' -m fast stop" >/dev/null
}

case "${1:-}" in
  build) build ;;
  start) start "${2:?port}" "${3:?data directory}" ;;
  start-postgresql) start_postgresql "${2:?port}" "${3:?data directory}" ;;
  stop-postgresql) stop_postgresql "${2:?data directory}" ;;
  *) echo "usage: $0 build | start PORT DIR | start-postgresql PORT DIR | stop-postgresql DIR" >&2; exit 2 ;;
esac
