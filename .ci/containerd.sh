#!/usr/bin/env bash
# Installs (Debian), configures and starts a private containerd with its CRI plugin, then imports busybox
# images and a pause image built offline from Debian's busybox-static. Idempotent; prints the socket path.
# State, config, log and socket live in $ORCH_CONTAINERD_DIR (default /tmp/orch-containerd);
# .ci/containerd-stop.sh [--purge] stops it again.
set -euo pipefail

DIR=${ORCH_CONTAINERD_DIR:-/tmp/orch-containerd}
SOCK="$DIR/containerd.sock"
CONFIG="$DIR/config.toml"
PIDFILE="$DIR/containerd.pid"
LOG="$DIR/containerd.log"
# Names the tests use (agent/runtime/cri/containerd-for-tests.ts); the pause image is the sandbox image.
BUSYBOX_REF=docker.io/orch/busybox:test
CONFORMANCE_REF=docker.io/orch/busybox:conformance
PAUSE_REF=registry.orch.io/pause:3.9
NS=k8s.io

say() { echo "containerd.sh: $*" >&2; }
die() { say "$*"; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root (containerd needs it)"

install_packages() {
  local missing=()
  command -v containerd >/dev/null || missing+=(containerd)
  command -v runc >/dev/null || missing+=(runc)
  [ -x /bin/busybox ] || missing+=(busybox-static)
  # Pod networking: the orchlet writes a bridge/host-local/portmap/loopback conflist for these plugins.
  [ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 || die "apt-get update failed"
  # policy-rc.d keeps the package from starting the system containerd service.
  local policy=/usr/sbin/policy-rc.d created_policy=0
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' > "$policy"; chmod +x "$policy"; created_policy=1; fi
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 || { [ $created_policy = 1 ] && rm -f "$policy"; die "apt-get install ${missing[*]} failed"; }
  [ $created_policy = 1 ] && rm -f "$policy"
  return 0
}

ctr_() { ctr -a "$SOCK" -n "$NS" "$@"; }

running() { [ -S "$SOCK" ] && ctr -a "$SOCK" version >/dev/null 2>&1; }

write_config() {
  local snapshotter=$1
  mkdir -p "$DIR/root" "$DIR/state" "$DIR/opt" "$DIR/cni/bin" "$DIR/cni/conf"
  cat > "$CONFIG" <<EOF
version = 2
root = "$DIR/root"
state = "$DIR/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]

[grpc]
  address = "$SOCK"

[ttrpc]
  address = "$SOCK.ttrpc"

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$DIR/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_REF"
  # Setting oom_score_adj needs CAP_SYS_RESOURCE, which containers running this script may lack.
  restrict_oom_score_adj = true
  enable_selinux = false

[plugins."io.containerd.grpc.v1.cri".containerd]
  snapshotter = "$snapshotter"
  default_runtime_name = "runc"

[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "$DIR/cni/bin"
  conf_dir = "$DIR/cni/conf"
EOF
}

start_containerd() {
  rm -f "$SOCK" "$SOCK.ttrpc"
  # fd 9 is the lock; the daemon must not inherit it.
  setsid nohup containerd --config "$CONFIG" >"$LOG" 2>&1 </dev/null 9>&- &
  echo $! > "$PIDFILE"
  for _ in $(seq 1 100); do
    running && return 0
    kill -0 "$(cat "$PIDFILE")" 2>/dev/null || break
    sleep 0.1
  done
  tail -n 20 "$LOG" >&2 || true
  die "containerd did not come up on $SOCK (log: $LOG)"
}

stop_containerd() {
  local pid
  pid=$(cat "$PIDFILE" 2>/dev/null || true)
  [ -n "$pid" ] || return 0
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  rm -f "$PIDFILE"
}

# overlayfs fails on some backing filesystems (e.g. overlay-on-overlay); containerd reports it as skipped.
plugin_ok() { ctr -a "$SOCK" plugins ls 2>/dev/null | awk -v id="$1" '$2 == id { print $NF }' | grep -x ok >/dev/null; }

sha() { sha256sum "$1" | cut -d' ' -f1; }
size() { stat -c %s "$1"; }

# Moves file $1 into the layout $2 as a blob; echoes "digest size".
add_blob() {
  local d
  d=$(sha "$1")
  mv "$1" "$2/blobs/sha256/$d"
  echo "$d $(size "$2/blobs/sha256/$d")"
}

# The ref goes into the config's labels so that every image gets its own ID: CRI's RemoveImage deletes
# every name of an image ID, and tests remove the conformance image while others run busybox.
image_config() { # $1 arch, $2 layer digest, $3 entrypoint json, $4 cmd json, $5 ref
  printf '{"architecture":"%s","os":"linux","created":"2024-01-01T00:00:00Z","config":{"Env":["PATH=/bin"],"Entrypoint":%s,"Cmd":%s,"WorkingDir":"/","Labels":{"io.orch.image":"%s"}},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
    "$1" "$3" "$4" "$5" "$2"
}

manifest() { # $1 config digest, $2 config size, $3 layer digest, $4 layer size
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
    "$1" "$2" "$3" "$4"
}

# ctr 1.6 names an imported image from io.containerd.image.name; the OCI ref.name is for other tools.
index_json() { # $1 manifest digest, $2 size, $3 ref, $4 arch
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"%s","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
    "$1" "$2" "$4" "$3" "$3"
}

# The one uncompressed layer all images share: static busybox and its applet links.
build_layer() { # $1 output tar
  local rootfs
  rootfs=$(mktemp -d "$DIR/rootfs.XXXXXX")
  mkdir -p "$rootfs/bin" "$rootfs/tmp" "$rootfs/etc"
  cp /bin/busybox "$rootfs/bin/busybox"
  for applet in sh echo sleep cat ls true false env id printf mkdir rm touch wc head tail grep readlink hostname; do
    ln -s busybox "$rootfs/bin/$applet"
  done
  echo 'root:x:0:0:root:/:/bin/sh' > "$rootfs/etc/passwd"
  echo 'root:x:0:' > "$rootfs/etc/group"
  chmod 1777 "$rootfs/tmp"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$rootfs" -cf "$1" .
  rm -rf "$rootfs"
}

# Writes an OCI layout archive for one image to $DIR/images/<n>.tar and echoes its path.
build_archive() { # $1 ref, $2 entrypoint json, $3 cmd json, $4 layer tar
  local arch layout out ld ls cd cs md ms
  arch=$(dpkg --print-architecture)
  layout=$(mktemp -d "$DIR/layout.XXXXXX")
  mkdir -p "$layout/blobs/sha256" "$DIR/images"
  cp "$4" "$layout/layer.tar"
  read -r ld ls < <(add_blob "$layout/layer.tar" "$layout")
  image_config "$arch" "$ld" "$2" "$3" "$1" > "$layout/config.json"
  read -r cd cs < <(add_blob "$layout/config.json" "$layout")
  manifest "$cd" "$cs" "$ld" "$ls" > "$layout/manifest.json"
  read -r md ms < <(add_blob "$layout/manifest.json" "$layout")
  index_json "$md" "$ms" "$1" "$arch" > "$layout/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' > "$layout/oci-layout"
  out="$DIR/images/$(echo "$1" | tr '/:@' '___').tar"
  tar -C "$layout" -cf "$out" oci-layout index.json blobs
  rm -rf "$layout"
  echo "$out"
}

# grep reads all of ctr's output: with -q it would exit early, SIGPIPE ctr and fail the pipeline (pipefail).
has_image() { ctr_ images ls -q 2>/dev/null | grep -x -- "$1" >/dev/null; }

# Imports whichever of the images is missing (tests remove and re-import the conformance one).
import_images() { # $1 snapshotter
  local layer="" spec ref ep cmd archive
  for spec in "$BUSYBOX_REF|null|[\"sh\"]" "$CONFORMANCE_REF|null|[\"sh\"]" "$PAUSE_REF|[\"/bin/sleep\"]|[\"2147483647\"]"; do
    IFS='|' read -r ref ep cmd <<<"$spec"
    has_image "$ref" && continue
    if [ -z "$layer" ]; then layer="$DIR/busybox-layer.tar"; build_layer "$layer"; fi
    archive=$(build_archive "$ref" "$ep" "$cmd" "$layer")
    ctr_ images import --snapshotter "$1" "$archive" >&2 || die "ctr images import $archive failed"
    has_image "$ref" || die "image $ref missing after import"
  done
  [ -z "$layer" ] || rm -f "$layer"
}

# containerd runs the plugins from its bin_dir, looked up at each call: links made while it runs are seen.
link_cni_plugins() {
  mkdir -p "$DIR/cni/bin" "$DIR/cni/conf"
  local p
  for p in bridge host-local portmap loopback; do
    [ -x "/usr/lib/cni/$p" ] && ln -sf "/usr/lib/cni/$p" "$DIR/cni/bin/$p"
  done
  return 0
}

main() {
  mkdir -p "$DIR"
  # Test files may call this script at the same time; one of them installs and starts, the others wait.
  exec 9>"$DIR/.lock"
  flock -w 120 9 || die "could not lock $DIR/.lock"
  install_packages
  link_cni_plugins
  local snapshotter
  if running; then
    snapshotter=$(sed -nE 's/^ *snapshotter = "(.*)"/\1/p' "$CONFIG" 2>/dev/null || true)
    snapshotter=${snapshotter:-overlayfs}
  else
    snapshotter=overlayfs
    write_config "$snapshotter"
    start_containerd
    if ! plugin_ok overlayfs; then
      say "overlayfs unavailable here; using the native snapshotter"
      stop_containerd
      snapshotter=native
      write_config "$snapshotter"
      start_containerd
    fi
  fi
  import_images "$snapshotter"
  echo "$SOCK"
}

main "$@"
