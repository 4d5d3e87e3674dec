#!/usr/bin/env bash
# Build the real Dockerfile and run the image as the Actions runner does, against a fake
# GitHub API on the host's loopback.
#
# Docker: the one the environment has (a runner's), else a dockerd started here (needs root). The base:
# the Dockerfile's digest-pinned BASE_IMAGE when it can be pulled; where no registry is reachable (this
# machine), a local stand-in instead, Debian bookworm from debootstrap (python3 3.11, pip, CA
# certificates), passed as --build-arg BASE_IMAGE. Where docker or the stand-in cannot be had at all,
# this says so loudly and exits 0 (skipped); a failing build or run exits non-zero.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
work=${CONTAINER_WORK:-/var/tmp/leaderboard-action-container}
mkdir -p "$work"
base_image=$(sed -n 's/^ARG BASE_IMAGE=//p' "$here/Dockerfile")
standin=leaderboard-action-base:bookworm-standin
image=${IMAGE:-leaderboard-action:test}

skip() {
  echo "::warning title=Container test skipped::$*"
  echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
  echo "!! CONTAINER TEST SKIPPED: $*"
  echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
  exit 0
}

if ! docker info >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then skip "no docker daemon, and not root: cannot start one"; fi
  if ! command -v dockerd >/dev/null; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null) \
      || skip "cannot install docker.io"
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
fi

build_args=()
if docker image inspect "$base_image" >/dev/null 2>&1 || docker pull -q "$base_image" >/dev/null 2>&1; then
  echo "base image: $base_image"
else
  echo "base image $base_image cannot be pulled here: building on the local stand-in $standin"
  if ! docker image inspect "$standin" >/dev/null 2>&1; then
    if [ ! -f "$work/rootfs.tar" ]; then
      if ! command -v debootstrap >/dev/null; then
        [ "$(id -u)" = 0 ] || skip "no registry, and not root: cannot debootstrap a stand-in base"
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null) \
          || skip "cannot install debootstrap"
      fi
      rootfs="$work/rootfs"
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
    docker import "$work/rootfs.tar" "$standin" >/dev/null
    echo "stand-in base image $standin imported from debootstrap"
  fi
  build_args=(--build-arg "BASE_IMAGE=$standin")
fi

echo "--- docker build"
docker build --network host "${build_args[@]}" -t "$image" "$here"
echo "--- the image: no compiler, no pip cache, the package byte-compiled"
docker run --rm --entrypoint sh "$image" -c '
  for c in cc gcc g++ clang; do if command -v "$c" >/dev/null; then echo "compiler in the image: $c"; exit 1; fi; done
  if [ -e /root/.cache/pip ]; then echo "pip cache in the image"; exit 1; fi
  ls /action/leaderboard/__pycache__/__init__.cpython-*.pyc >/dev/null || { echo "leaderboard not byte-compiled"; exit 1; }'
echo "image size: $(docker image inspect --format '{{.Size}}' "$image") bytes"
echo "--- docker run, as the runner"
"$python" "$here/scripts/container_e2e.py" "$image"
