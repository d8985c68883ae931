#!/usr/bin/env bash
# Installs Debian's etcd-server if missing and starts a private etcd cluster (default 3 members) on loopback
# ports with its data in DIR. Prints the client URLs (comma-separated) on stdout and writes them to DIR/endpoints;
# member i's pid is in DIR/m<i>.pid, its client URL in DIR/m<i>.url and its command line in DIR/m<i>.cmd (so a test
# can kill and restart one member). `.ci/etcd-stop.sh DIR` stops the cluster and removes DIR.
# Usage: .ci/etcd.sh [DIR] [MEMBERS]   (DIR default: a new mktemp -d directory)
set -euo pipefail

DIR=${1:-$(mktemp -d /tmp/orch-etcd.XXXXXX)}
MEMBERS=${2:-3}
say() { echo "etcd.sh: $*" >&2; }
die() { say "$*"; exit 1; }

install_etcd() {
  command -v etcd >/dev/null && return 0
  [ "$(id -u)" -eq 0 ] || die "etcd is not installed and installing it needs root"
  # Test files start clusters in parallel: one installs, the others wait for it (and for dpkg's lock).
  exec 9>/tmp/orch-etcd-install.lock
  flock -w 600 9 || die "timed out waiting for another etcd install"
  command -v etcd >/dev/null && return 0
  say "installing etcd-server"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq -o DPkg::Lock::Timeout=300 >&2 || die "apt-get update failed"
  # policy-rc.d keeps the package from starting the system etcd service.
  local policy=/usr/sbin/policy-rc.d created_policy=0
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod +x "$policy"; created_policy=1; fi
  apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends etcd-server >&2 || { [ $created_policy = 1 ] && rm -f "$policy"; die "apt-get install etcd-server failed"; }
  [ $created_policy = 1 ] && rm -f "$policy"
  return 0
}

# Free loopback ports, asked of the kernel (bind to port 0) and released again.
free_ports() {
  node -e '
    const net = require("node:net"); const n = Number(process.argv[1]); const out = []; const servers = []
    const next = () => { if (out.length === n) { servers.forEach(s => s.close()); console.log(out.join(" ")); return }
      const s = net.createServer(); servers.push(s); s.listen(0, "127.0.0.1", () => { out.push(s.address().port); next() }) }
    next()' "$1"
}

install_etcd
mkdir -p "$DIR"
read -r -a PORTS <<<"$(free_ports $((MEMBERS * 2)))"
cluster=""
for ((i = 0; i < MEMBERS; i++)); do cluster+="${cluster:+,}m$i=http://127.0.0.1:${PORTS[$((2 * i + 1))]}"; done
token="orch-$(basename "$DIR")"
urls=""
for ((i = 0; i < MEMBERS; i++)); do
  client="http://127.0.0.1:${PORTS[$((2 * i))]}" peer="http://127.0.0.1:${PORTS[$((2 * i + 1))]}"
  urls+="${urls:+,}$client"
  echo "$client" > "$DIR/m$i.url"
  # Progress notifications every 5 s (etcd's default is 10 minutes) so idle watches learn the revision.
  cmd=(etcd --name "m$i" --data-dir "$DIR/m$i" --listen-client-urls "$client" --advertise-client-urls "$client"
    --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" --initial-cluster "$cluster"
    --initial-cluster-state new --initial-cluster-token "$token" --experimental-watch-progress-notify-interval 5s
    --heartbeat-interval 50 --election-timeout 500 --log-level error)
  printf '%q ' "${cmd[@]}" > "$DIR/m$i.cmd"
  setsid "${cmd[@]}" >>"$DIR/m$i.log" 2>&1 < /dev/null &
  echo $! > "$DIR/m$i.pid"
done
echo "$urls" > "$DIR/endpoints"

# Ready when every member answers its health endpoint (the cluster has a leader).
for ((try = 0; try < 150; try++)); do
  ok=0
  for ((i = 0; i < MEMBERS; i++)); do
    curl -fsS "$(cat "$DIR/m$i.url")/health" 2>/dev/null | grep -q '"health":"true"' && ok=$((ok + 1))
  done
  if [ $ok -eq "$MEMBERS" ]; then echo "$urls"; exit 0; fi
  sleep 0.1
done
say "cluster in $DIR did not become healthy; logs:"; tail -n 20 "$DIR"/m*.log >&2
"$(dirname "$0")/etcd-stop.sh" "$DIR"
exit 1
