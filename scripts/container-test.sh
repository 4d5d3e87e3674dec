#!/usr/bin/env bash
# Build the real Dockerfile and run the image as the Actions runner does, against a fake
# GitHub API on the host's loopback. Needs root (dockerd, debootstrap).
#
# No image registry is reachable here, so the Dockerfile's base image is a local stand-in:
# Debian bookworm from debootstrap (python3 3.11, pip, CA certificates) imported under the
# Dockerfile's FROM tag. Where dockerd or debootstrap cannot run at all, this says so loudly
# and exits 0 (skipped); a failing build or run exits non-zero.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
work=${CONTAINER_WORK:-/var/tmp/leaderboard-action-container}
mkdir -p "$work"
base_tag=$(awk '/^FROM /{print $2; exit}' "$here/Dockerfile")
image=leaderboard-action:test

skip() {
  echo "::warning title=Container test skipped::$*"
  echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
  echo "!! CONTAINER TEST SKIPPED: $*"
  echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
  exit 0
}

if [ "$(id -u)" != 0 ]; then skip "not root: cannot start dockerd"; fi
if ! command -v dockerd >/dev/null || ! command -v debootstrap >/dev/null; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io debootstrap >/dev/null) \
    || skip "cannot install docker.io and debootstrap"
fi

sock="$work/docker.sock"
export DOCKER_HOST="unix://$sock"
if ! docker info >/dev/null 2>&1; then
  dockerd --iptables=false --ip6tables=false --bridge=none --data-root "$work/data" \
    --exec-root "$work/exec" --pidfile "$work/dockerd.pid" -H "$DOCKER_HOST" >"$work/dockerd.log" 2>&1 &
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { tail -20 "$work/dockerd.log"; skip "dockerd does not start on this machine"; }
  trap 'kill "$(cat "$work/dockerd.pid")" 2>/dev/null || true' EXIT
fi

if ! docker image inspect "$base_tag" >/dev/null 2>&1; then
  rootfs="$work/rootfs"
  if [ ! -f "$work/rootfs.tar" ]; then
    rm -rf "$rootfs"
    debootstrap --variant=minbase --include=python3,python3-pip,ca-certificates bookworm "$rootfs" \
      http://deb.debian.org/debian >"$work/debootstrap.log" 2>&1 \
      || { tail -20 "$work/debootstrap.log"; skip "debootstrap cannot build a Debian root here"; }
    rm -f "$rootfs"/usr/lib/python3*/EXTERNALLY-MANAGED
    ln -sf python3 "$rootfs/usr/bin/python"
    # The machine reaches PyPI through a proxy with its own CA: give the stand-in the same bundle.
    cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
    printf '[global]\ncert = /etc/ssl/certs/ca-certificates.crt\n' >"$rootfs/etc/pip.conf"
    tar -C "$rootfs" -cf "$work/rootfs.tar" .
    rm -rf "$rootfs"
  fi
  docker import "$work/rootfs.tar" "$base_tag" >/dev/null
  echo "stand-in base image $base_tag imported from debootstrap"
fi

echo "--- docker build"
docker build --network host -t "$image" "$here"
echo "--- docker run, as the runner"
"$python" "$here/scripts/container_e2e.py" "$image"
