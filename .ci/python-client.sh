#!/usr/bin/env bash
# Installs Debian's python3-kubernetes (the Python client the end-to-end tests use) when it is missing. Root only;
# idempotent. Exit 0 when the client imports afterwards.
set -euo pipefail
say() { echo "python-client.sh: $*" >&2; }
if /usr/bin/python3 -c 'import kubernetes' 2>/dev/null; then exit 0; fi
[ "$(id -u)" -eq 0 ] || { say "must run as root to install python3-kubernetes"; exit 1; }
export DEBIAN_FRONTEND=noninteractive
say "installing python3-kubernetes"
apt-get update -qq >&2 || { say "apt-get update failed"; exit 1; }
apt-get install -y -qq --no-install-recommends python3-kubernetes >&2 || { say "apt-get install python3-kubernetes failed"; exit 1; }
/usr/bin/python3 -c 'import kubernetes'
