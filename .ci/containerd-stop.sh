#!/usr/bin/env bash
# Stops the private containerd that .ci/containerd.sh started: its pods and containers, then the daemon.
set -uo pipefail

DIR=${ORCH_CONTAINERD_DIR:-/tmp/orch-containerd}
SOCK="$DIR/containerd.sock"
PIDFILE="$DIR/containerd.pid"

pid=$(cat "$PIDFILE" 2>/dev/null || true)
if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
  echo "containerd.sh: no containerd running from $DIR" >&2
  rm -f "$PIDFILE"
  exit 0
fi

# Kill the tasks first so their shims exit; the shims outlive the daemon otherwise.
if [ -S "$SOCK" ]; then
  for id in $(ctr -a "$SOCK" -n k8s.io tasks ls -q 2>/dev/null); do
    ctr -a "$SOCK" -n k8s.io tasks kill -s SIGKILL "$id" >/dev/null 2>&1 || true
  done
  sleep 0.2
  for id in $(ctr -a "$SOCK" -n k8s.io tasks ls -q 2>/dev/null); do
    ctr -a "$SOCK" -n k8s.io tasks delete -f "$id" >/dev/null 2>&1 || true
  done
fi

kill "$pid" 2>/dev/null || true
for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
rm -f "$PIDFILE" "$SOCK" "$SOCK.ttrpc"
# With --purge, the whole state dir goes too (overlay mounts under it are unmounted first).
if [ "${1:-}" = "--purge" ]; then
  grep -o " $DIR/[^ ]*" /proc/mounts | sort -r | while read -r m; do umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; done
  rm -rf "$DIR"
fi
echo "containerd.sh: stopped" >&2
