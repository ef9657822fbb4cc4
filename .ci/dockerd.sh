#!/usr/bin/env bash
# Starts a Docker daemon in the background unless one answers already, and
# waits until it does (at most 60 s). Prints the pid it started to the file
# named by $1 (if given), so the caller can stop exactly that daemon.
#
#   .ci/dockerd.sh [PIDFILE]
#
# Needs root and Debian's docker.io package (`apt-get install docker.io`).
set -euo pipefail

pidfile=${1:-}
if docker info >/dev/null 2>&1; then
  echo "dockerd: a Docker daemon answers already"
  exit 0
fi
log=/tmp/learn-dockerd.log
t0=$(date +%s.%N)
dockerd >"$log" 2>&1 &
pid=$!
if [ -n "$pidfile" ]; then echo "$pid" >"$pidfile"; fi
for _ in $(seq 1 120); do
  if docker info >/dev/null 2>&1; then
    echo "dockerd: started (pid $pid) in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
    exit 0
  fi
  if ! kill -0 "$pid" 2>/dev/null; then break; fi
  sleep 0.5
done
echo "dockerd: the daemon did not start; its log ends with:" >&2
tail -n 30 "$log" >&2
exit 1
