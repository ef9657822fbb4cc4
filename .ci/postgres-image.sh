#!/usr/bin/env bash
# Builds a PostgreSQL image for learn's Docker tests from this machine's own
# PostgreSQL server package, for machines where no image registry is
# reachable (CI here). It behaves like the official postgres image as far as
# learn's Docker way needs: POSTGRES_USER, POSTGRES_PASSWORD
# and POSTGRES_DB; initdb on the first start; password auth on 0.0.0.0:5432;
# "database system is ready to accept connections" logged twice (a temporary
# server creates the database, then the real one starts); VOLUME
# /var/lib/postgresql/data.
#
#   .ci/postgres-image.sh [TAG]     (default learn-postgres:ci)
#   LEARN_POSTGRES_IMAGE=learn-postgres:ci go test ./pgtemp/ -run Docker
#
# Needs a running Docker daemon and the server binaries
# (/usr/lib/postgresql/*/bin, e.g. `apt install postgresql`). It is
# idempotent: when TAG exists and was built from the same binaries and the
# same version of this script, it only says so (well under a second).
set -euo pipefail

tag=${1:-learn-postgres:ci}

bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
if [ -z "$bindir" ] || [ ! -x "$bindir/postgres" ]; then
  echo "postgres-image: no PostgreSQL server binaries in /usr/lib/postgresql/*/bin; install them (apt install postgresql)" >&2
  exit 1
fi
pgdir=$(dirname "$bindir")
major=$(basename "$pgdir")
sharedir=/usr/share/postgresql/$major
version=$("$bindir/postgres" --version | sed 's/.*(PostgreSQL) //')

# The key changes with the binaries or this script, and only then is the
# image rebuilt.
key=$( (cat "$0"; echo "$version"; stat -c '%s %Y' "$bindir/postgres") | sha256sum | cut -c1-16)
if [ "$(docker image inspect -f '{{index .Config.Labels "learn.image.key"}}' "$tag" 2>/dev/null || true)" = "$key" ]; then
  echo "postgres-image: $tag is up to date (PostgreSQL $version)"
  exit 0
fi

t0=$(date +%s.%N)
old_id=$(docker image inspect -f '{{.Id}}' "$tag" 2>/dev/null || true)
root=$(mktemp -d /tmp/learn-pgimage-XXXXXX)
trap 'rm -rf "$root"' EXIT

# The server, its libraries and data files, without the LLVM JIT (its
# library alone is larger than everything else; PostgreSQL runs without it).
mkdir -p "$root$pgdir" "$root$sharedir"
cp -a "$bindir" "$root$pgdir/"
mkdir -p "$root$pgdir/lib"
for so in "$pgdir"/lib/*.so; do
  case $(basename "$so") in llvmjit*) continue ;; esac
  cp -a "$so" "$root$pgdir/lib/"
done
cp -a "$sharedir/." "$root$sharedir/"
mkdir -p "$root/usr/share"
cp -a /usr/share/zoneinfo "$root/usr/share/"

# Every shared library those programs load, with the paths ldd gives, and
# the shell the entrypoint runs in.
libs=$( { for f in "$root$pgdir"/bin/* "$root$pgdir"/lib/*.so /bin/dash; do ldd "$f" 2>/dev/null || true; done; } |
  awk '/=> \// { print $3 } /^[ \t]*\/[^ ]+ \(/ { print $1 }' | sort -u)
for lib in $libs; do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
mkdir -p "$root/bin"
cp /bin/dash "$root/bin/dash"
ln -s dash "$root/bin/sh"
# Debian's merged /usr: /lib64/ld-linux… and /lib/… may be reached through
# either path.
for d in lib lib64; do
  if [ -L "/$d" ] && [ ! -e "$root/$d" ]; then ln -s "$(readlink "/$d")" "$root/$d"; fi
done

# Users, and the directories the server writes.
mkdir -p "$root/etc" "$root/tmp" "$root/var/lib/postgresql/data" "$root/var/run/postgresql"
chmod 1777 "$root/tmp"
printf 'root:x:0:0:root:/root:/bin/sh\npostgres:x:999:999:PostgreSQL:/var/lib/postgresql:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\npostgres:x:999:\n' >"$root/etc/group"
chown -R 999:999 "$root/var/lib/postgresql" "$root/var/run/postgresql"
chmod 0700 "$root/var/lib/postgresql/data"

cat >"$root/docker-entrypoint.sh" <<EOF
#!/bin/sh
# learn's stand-in for the official image's entrypoint (PostgreSQL $version).
set -e
BIN=$bindir
EOF
cat >>"$root/docker-entrypoint.sh" <<'EOF'
export PGDATA="${PGDATA:-/var/lib/postgresql/data}"
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
if [ "${1#-}" != "$1" ]; then set -- postgres "$@"; fi
if [ "$1" != postgres ]; then exec "$@"; fi
shift
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "$POSTGRES_PASSWORD" ]; then
    echo "Error: the database is uninitialized and POSTGRES_PASSWORD is not set." >&2
    exit 1
  fi
  "$BIN/initdb" -D "$PGDATA" -U "$POSTGRES_USER" \
    --auth-local=trust --auth-host=scram-sha-256 --locale=C -E UTF8 --no-sync
  printf 'host all all all scram-sha-256\n' >>"$PGDATA/pg_hba.conf"
  # A temporary server on the Unix socket only, as the official image does,
  # sets the password and creates the database.
  "$BIN/pg_ctl" -D "$PGDATA" -w -o "-c listen_addresses='' -k /var/run/postgresql" start
  "$BIN/psql" -v ON_ERROR_STOP=1 -h /var/run/postgresql -U "$POSTGRES_USER" -d postgres -q \
    -v user="$POSTGRES_USER" -v password="$POSTGRES_PASSWORD" -v db="$POSTGRES_DB" <<'SQL'
ALTER ROLE :"user" PASSWORD :'password';
SELECT 'CREATE DATABASE ' || quote_ident(:'db') WHERE :'db' <> 'postgres' \gexec
SQL
  "$BIN/pg_ctl" -D "$PGDATA" -m fast -w stop
  echo "PostgreSQL init process complete; ready for start up."
fi
exec "$BIN/postgres" -c listen_addresses='*' -k /var/run/postgresql "$@"
EOF
chmod 0755 "$root/docker-entrypoint.sh"

tar --numeric-owner -C "$root" -c . | docker import \
  --change 'ENTRYPOINT ["/docker-entrypoint.sh"]' \
  --change 'CMD ["postgres"]' \
  --change 'USER postgres' \
  --change "ENV PATH=$bindir:/bin PGDATA=/var/lib/postgresql/data" \
  --change 'EXPOSE 5432' \
  --change 'VOLUME ["/var/lib/postgresql/data"]' \
  --change "LABEL learn.image.key=$key" \
  --message "learn: PostgreSQL $version from this machine's packages" \
  - "$tag" >/dev/null
# The image this one replaces would stay behind, untagged.
if [ -n "$old_id" ]; then docker image rm "$old_id" >/dev/null 2>&1 || true; fi
echo "postgres-image: built $tag (PostgreSQL $version, $(docker image inspect -f '{{.Size}}' "$tag" | awk '{ printf "%d MB", $1/1e6 }')) in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
