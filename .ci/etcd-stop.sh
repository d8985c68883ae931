#!/usr/bin/env bash
# Stops the etcd cluster .ci/etcd.sh started in DIR (only the pids it recorded) and removes DIR.
set -uo pipefail
DIR=${1:?usage: .ci/etcd-stop.sh DIR}
for f in "$DIR"/m*.pid; do
  [ -f "$f" ] || continue
  pid=$(cat "$f"); kill "$pid" 2>/dev/null
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null
done
case "$DIR" in /tmp/*) rm -rf "$DIR" ;; esac
exit 0
